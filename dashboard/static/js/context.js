// Each pipeline node's context, one tab per node: token bars per section
// against the budget, the tiers, the notes and the prompt text, refreshed by
// the contextUpdated subscription while the tab is open. The subscription
// brings the build's shape (tokens, tiers, notes); its texts are read when
// the admin opens one, so a rebuild costs a few hundred bytes, not the prompt.

import { describe, gql, subscribe } from './api.js';
import { empty, errorBox, h, keepOpen, loading, num, replace } from './dom.js';

const nodes = ['UNDERSTAND', 'THINK', 'ACT', 'REPLY', 'MESSAGES'];

const buildFields = `node tokenCount budget tokenizer truncatedTurns notes
  sections { name tokenCount truncated }
  messages { role tokenCount }
  tiers { active generated retained }`;
const contextQuery = `query Context($id: ID!, $node: ContextNode!) { session(id: $id) { id context(node: $node) { ${buildFields} } } }`;
// A build's texts come in three parts, each read when a <details> that
// shows it is opened: the whole prompt, the sections' and the messages'.
const textFields = { prompt: 'text', section: 'sections { name text }', message: 'messages { content }' };
const textsQuery = (fields) => `query ContextTexts($id: ID!, $node: ContextNode!) { session(id: $id) { id context(node: $node) { ${fields} } } }`;

/** textsByKey names a part's texts as the boxes do (textBox): prompt, section:NAME, message:I. */
function textsByKey(part, c) {
  if (part === 'prompt') return { prompt: c.text };
  if (part === 'section') return Object.fromEntries(c.sections.map((x) => [`section:${x.name}`, x.text]));
  return Object.fromEntries(c.messages.map((x, i) => [`message:${i}`, x.content]));
}
const contextSub = `subscription ContextUpdated($id: ID!, $node: ContextNode!) { contextUpdated(sessionID: $id, node: $node) { ${buildFields} } }`;

function percent(part, whole) {
  if (!whole) return 0;
  return Math.round((part / whole) * 1000) / 10;
}

/**
 * bar draws tokens against a scale (the largest of the build's total and
 * its budget), so that a section reads at its share of what was built
 * rather than as a sliver of the budget; marker, when given, draws the
 * budget's place on the same scale. The text beside it says it in words.
 */
export function bar(tokens, scale, { over = false, marker = null } = {}) {
  const width = Math.min(100, percent(tokens, scale));
  return h('span', { class: `bar${over ? ' over' : ''}`, 'aria-hidden': 'true' },
    h('span', { style: `width: ${width}%` }),
    marker === null ? null : h('span', { class: 'budget-marker', title: 'budget', style: `left: ${Math.min(100, percent(marker, scale))}%` }));
}

/** textBox is a <pre> that fillTexts fills with one of the build's texts, named by key. */
function textBox(key) {
  return h('pre', { class: 'prompt', tabindex: '0', dataset: { text: key } });
}

function sectionRow(s, budget, scale, onOpen) {
  return h('li', { class: 'ctx-section', dataset: { section: s.name } },
    h('div', { class: 'ctx-line' },
      h('span', { class: 'ctx-name' }, s.name),
      bar(s.tokenCount, scale, { marker: budget <= scale ? budget : null }),
      h('span', { class: 'ctx-count' }, `${num(s.tokenCount)} tokens · ${percent(s.tokenCount, budget)}% of the budget`),
      s.truncated ? h('span', { class: 'badge badge-truncated' }, 'truncated') : null),
    h('details', { dataset: { key: `section-${s.name}` }, ontoggle: onOpen }, h('summary', {}, `Text of ${s.name}`), textBox(`section:${s.name}`)));
}

function tierList(name, refs) {
  return [h('dt', {}, name), h('dd', {}, refs.length ? refs.map((r) => h('code', { class: 'tier-ref' }, r)) : h('span', { class: 'hint' }, 'none'))];
}

/** renderBuild shows one context build; onOpen is the toggle of each
 * <details> that holds a text, which it reads when opened. */
function renderBuild(b, onOpen) {
  const over = b.tokenCount > b.budget;
  return h('div', { class: 'ctx-build', dataset: { node: b.node } },
    h('p', { class: 'ctx-total' },
      h('strong', {}, `${num(b.tokenCount)} of ${num(b.budget)} tokens`),
      ` (${percent(b.tokenCount, b.budget)}% of the budget) · ${b.tokenizer}`,
      b.truncatedTurns ? ` · ${num(b.truncatedTurns)} older turns left out` : ''),
    bar(b.tokenCount, Math.max(b.tokenCount, b.budget), { over, marker: b.budget }),
    b.sections.length
      ? h('ol', { class: 'ctx-sections', 'aria-label': 'Sections in priority order' },
        b.sections.map((s) => sectionRow(s, b.budget, Math.max(1, ...b.sections.map((x) => x.tokenCount)), onOpen)))
      : empty('This build has no sections.'),
    b.messages.length ? h('details', { dataset: { key: 'messages' }, ontoggle: onOpen },
      h('summary', {}, `The ${num(b.messages.length)} messages`),
      h('ol', { class: 'messages' }, b.messages.map((m, i) => h('li', { class: `msg msg-${m.role}` },
        h('span', { class: 'msg-role' }, `${m.role} · ${num(m.tokenCount)} tokens`),
        h('pre', { dataset: { text: `message:${i}` } }))))) : null,
    h('h3', {}, 'Tiers'),
    h('dl', { class: 'tiers' }, tierList('Active', b.tiers.active), tierList('Generated', b.tiers.generated), tierList('Retained', b.tiers.retained)),
    b.notes.length ? [h('h3', {}, 'Notes'), h('ul', { class: 'notes' }, b.notes.map((n) => h('li', {}, n)))] : null,
    h('details', { dataset: { key: 'prompt' }, ontoggle: onOpen }, h('summary', {}, 'Full prompt text'), textBox('prompt')));
}

/** contextPanel is the tabs of a session's context builds. */
export function contextPanel(sessionID) {
  // A deep link names its node: #/sessions/<id>?node=THINK.
  const linked = new URLSearchParams(location.hash.split('?')[1] || '').get('node');
  let selected = nodes.includes(linked) ? linked : 'UNDERSTAND';
  let stopSub = () => {};
  let started = false;
  let generation = 0;
  let texts = new Map(); // part → the promise of the shown build's texts of that part, once one was opened
  const status = h('p', { class: 'hint', id: 'context-status', 'aria-live': 'polite' });
  const panel = h('div', { role: 'tabpanel', id: 'context-panel', tabindex: '0' });
  const tabs = nodes.map((node) => h('button', {
    type: 'button', role: 'tab', id: `tab-${node}`, 'aria-controls': 'context-panel',
    onclick: () => select(node), onkeydown: (ev) => arrows(ev, node),
  }, node.charAt(0) + node.slice(1).toLowerCase()));
  const el = h('section', { class: 'card', id: 'section-context', tabindex: '-1', 'aria-labelledby': 'heading-context' },
    h('h2', { id: 'heading-context' }, 'Context'),
    h('div', { role: 'tablist', 'aria-label': 'Pipeline nodes', class: 'tabs' }, tabs),
    status,
    panel);

  function arrows(ev, node) {
    const i = nodes.indexOf(node);
    let j = -1;
    if (ev.key === 'ArrowRight') j = (i + 1) % nodes.length;
    else if (ev.key === 'ArrowLeft') j = (i + nodes.length - 1) % nodes.length;
    else if (ev.key === 'Home') j = 0;
    else if (ev.key === 'End') j = nodes.length - 1;
    if (j < 0) return;
    ev.preventDefault();
    select(nodes[j]);
    tabs[j].focus();
  }

  // openText fills the opened <details>' texts from the build shown, each
  // part read once per build; a rebuild reads again only the parts open.
  async function openText(ev) {
    const details = ev.target;
    if (!details.open) return;
    const mine = generation;
    const boxes = [...details.querySelectorAll('[data-text]')];
    const parts = [...new Set(boxes.map((box) => box.dataset.text.split(':')[0]))];
    const missing = parts.filter((part) => !texts.has(part));
    if (missing.length) {
      const read = gql(textsQuery(missing.map((part) => textFields[part]).join(' ')), { id: sessionID, node: selected }).then((d) => d.session.context);
      for (const part of missing) texts.set(part, read.then((c) => textsByKey(part, c)));
    }
    for (const box of boxes) if (!box.firstChild) box.textContent = 'Loading…';
    try {
      const found = Object.assign({}, ...await Promise.all(parts.map((part) => texts.get(part))));
      if (mine !== generation) return;
      for (const box of boxes) box.textContent = found[box.dataset.text] || '(empty)';
    } catch (err) {
      for (const part of parts) texts.delete(part);
      for (const box of boxes) box.textContent = `Could not read the text: ${describe(err)} Close it and open it again to retry.`;
    }
  }

  function markTabs() {
    tabs.forEach((t, i) => {
      const on = nodes[i] === selected;
      t.setAttribute('aria-selected', String(on));
      t.tabIndex = on ? 0 : -1;
    });
    panel.setAttribute('aria-labelledby', `tab-${selected}`);
  }

  async function select(node) {
    selected = node;
    markTabs();
    // The address names the node shown, for a link to it; replaceState
    // changes it without a hashchange, so the view is not rebuilt.
    const [path, query] = location.hash.split('?');
    const params = new URLSearchParams(query || '');
    if (node === 'UNDERSTAND') params.delete('node'); else params.set('node', node);
    const hash = params.toString() ? `${path}?${params}` : path;
    if (path.startsWith(`#/sessions/${sessionID}`) && hash !== location.hash) history.replaceState(history.state, '', hash);
    stopSub();
    const mine = ++generation;
    replace(panel, loading(`the ${node} context`));
    status.textContent = '';
    try {
      const data = await gql(contextQuery, { id: sessionID, node });
      if (mine !== generation) return;
      if (!data.session) { replace(panel, errorBox('The session is gone.')); return; }
      texts = new Map();
      replace(panel, renderBuild(data.session.context, openText));
    } catch (err) {
      if (mine !== generation) return;
      replace(panel, errorBox(`Could not build the ${node} context: ${describe(err)}`, () => select(node)));
      return;
    }
    stopSub = subscribe(contextSub, { id: sessionID, node }, {
      next: (d) => {
        if (mine !== generation || !d.contextUpdated) return;
        texts = new Map();
        keepOpen(panel, renderBuild(d.contextUpdated, openText));
        status.textContent = `Live · rebuilt ${new Date().toLocaleTimeString('en-GB')}`;
      },
      error: (text) => { if (mine === generation) status.textContent = text; },
    });
  }

  return {
    el,
    /** live starts the first tab once the session has loaded. */
    live() {
      if (started) return;
      started = true;
      select(selected);
    },
    stop() { generation++; stopSub(); },
  };
}
