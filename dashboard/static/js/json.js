// A small JSON viewer: event payloads and artifact content as a tree of
// <details> (open near the top, folded deeper down, so that a big payload
// starts short), with a button that copies the whole value, pretty-printed.

import { h } from './dom.js';

// Objects and arrays this deep or deeper start folded; the top two levels start open.
const openDepth = 2;

/** toClipboard copies text, with the old copy command where the clipboard API is refused. */
export async function toClipboard(text) {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // Without the clipboard API (an insecure origin, or no permission),
    // the selection and the old copy command still work.
    const area = h('textarea', { style: 'position: fixed; opacity: 0' }, text);
    document.body.append(area);
    area.select();
    document.execCommand('copy');
    area.remove();
  }
}

function isContainer(value) {
  return value !== null && typeof value === 'object';
}

/** size says what a folded object or array holds: "3 keys", "1 item". */
function size(value) {
  const n = Array.isArray(value) ? value.length : Object.keys(value).length;
  const noun = Array.isArray(value) ? 'item' : 'key';
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function scalar(value) {
  const kind = value === null ? 'null' : typeof value;
  return h('span', { class: `json-${kind}` }, JSON.stringify(value));
}

// node is one value of the tree at path (its keys from the top, joined
// with "/"); folds remembers which nodes the admin opened or closed.
function node(key, value, depth, path, folds) {
  const name = key === null ? null : h('span', { class: 'json-key' }, `${key}: `);
  if (!isContainer(value)) return h('li', {}, name, scalar(value));
  const [open, close] = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  const entries = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  if (entries.length === 0) return h('li', {}, name, h('span', { class: 'json-empty' }, `${open}${close}`));
  const details = h('details', {
    class: 'json-node', open: folds.has(path) ? folds.get(path) : depth < openDepth,
    ontoggle: () => folds.set(path, details.open),
  },
  h('summary', {}, name, open, h('span', { class: 'json-size' }, ` ${size(value)} `), close),
  h('ul', {}, entries.map(([k, v]) => node(k, v, depth + 1, `${path}/${k}`, folds))));
  return h('li', {}, details);
}

/**
 * jsonView shows value as a collapsible tree with a Copy button; what names
 * it in the button's label and in the word that it was copied, which say
 * (a notice function) shows. A view that redraws the same value live passes
 * the same folds (a Map) each time, so that what the admin unfolded stays so.
 */
export function jsonView(value, what, say, folds = new Map()) {
  const text = JSON.stringify(value, null, 2);
  return h('div', { class: 'json-view' },
    h('button', {
      type: 'button', class: 'small secondary copy', 'aria-label': `Copy ${what} as JSON`,
      onclick: async () => {
        await toClipboard(text);
        say(`Copied ${what} as JSON.`, 'success');
      },
    }, 'Copy'),
    h('ul', { class: 'json-tree' }, node(null, value, 0, '', folds)));
}
