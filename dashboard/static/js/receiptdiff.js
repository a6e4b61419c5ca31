// The diff of two builds of one node, as "What the model saw" shows it:
// refs that entered or left each tier, sections that grew or shrank, lines
// removed and added.

import { h, num } from './dom.js';

/** diffFields is what the page reads of a diff. */
export const diffFields = `textCompared tiers { tier entered left } sections { name before after delta } lines { change text }`;
/** diffQuery reads the diff of two builds. */
export const diffQuery = `query ReceiptDiff($from: ID!, $to: ID!) { contextReceiptDiff(from: $from, to: $to) { ${diffFields} } }`;

function tierChanges(tiers) {
  return h('dl', { class: 'tiers', id: 'receipt-diff-tiers' }, tiers.map((t) => [
    h('dt', {}, t.tier),
    h('dd', { dataset: { tier: t.tier } },
      t.entered.length || t.left.length
        ? [t.entered.map((r) => h('code', { class: 'tier-ref diff-add', dataset: { entered: r } }, `+${r}`)),
          t.left.map((r) => h('code', { class: 'tier-ref diff-del', dataset: { left: r } }, `−${r}`))]
        : h('span', { class: 'hint' }, 'no change')),
  ]));
}

function sectionChanges(sections) {
  const cell = (v) => (v == null ? '—' : num(v));
  return h('table', { class: 'diff-sections', id: 'receipt-diff-sections' },
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Section'), h('th', { scope: 'col' }, 'Before'), h('th', { scope: 'col' }, 'After'), h('th', { scope: 'col' }, 'Change'))),
    h('tbody', {}, sections.map((s) => h('tr', { dataset: { section: s.name } },
      h('th', { scope: 'row' }, s.name), h('td', {}, cell(s.before)), h('td', {}, cell(s.after)),
      h('td', { class: s.delta > 0 ? 'diff-add' : s.delta < 0 ? 'diff-del' : '' }, s.delta > 0 ? `+${num(s.delta)}` : num(s.delta))))));
}

function lineChanges(d) {
  if (!d.textCompared) return h('p', { class: 'hint' }, 'The texts were not compared: a receipt kept only its SHA-256.');
  if (!d.lines.length) return h('p', { class: 'hint' }, 'The texts are the same.');
  return h('pre', { class: 'prompt diff-lines', id: 'receipt-diff-lines', tabindex: '0' },
    d.lines.map((l) => h('span', { class: l.change === 'ADDED' ? 'diff-add' : 'diff-del' }, `${l.change === 'ADDED' ? '+' : '−'} ${l.text}\n`)));
}

/** diffView is a diff's parts: tiers, sections, lines. */
export function diffView(d) {
  return [
    h('h3', {}, 'Refs that entered (+) or left (−) each tier'), tierChanges(d.tiers),
    // Its own scroll box, which the keyboard can reach and scroll: a
    // section's name does not wrap on a phone.
    h('h3', {}, 'Sections'), h('div', { class: 'scroll-box', tabindex: '0', role: 'region', 'aria-label': 'Sections before and after' }, sectionChanges(d.sections)),
    h('h3', {}, 'Lines removed (−) and added (+)'), lineChanges(d),
  ];
}
