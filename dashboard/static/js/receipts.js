// What the model saw: the context builds a runtime recorded (recordContext)
// turn by turn, each node's sections across the turns against its budget,
// and the diff of two builds of one node: refs that entered or left each
// tier, sections that grew or shrank, lines added and removed.

import { describe, gql } from './api.js';
import { empty, errorBox, focusHref, focusOn, h, keepOpen, loading, num, replace, when } from './dom.js';
import { factInput, whereHeld } from './facts.js';
import { diffFields, diffQuery, diffView } from './receiptdiff.js';

/** receiptHeadFields is what the chart shows of a build: all but its text,
 * which is read when its prompt is opened (textQuery). */
export const receiptHeadFields = `id turn node tokenCount budget tokenizer truncatedTurns notes textSha256 createdAt
  sections { name tokenCount truncated } tiers { active generated retained }`;
const textQuery = `query ReceiptText($id: ID!, $session: ID) { contextReceipt(id: $id, sessionID: $session) { id text } }`;

/** receiptPage is how many builds a page loads, newest first. */
export const receiptPage = 100;
export const receiptConnection = `totalCount pageInfo { hasPreviousPage startCursor } edges { node { ${receiptHeadFields} } }`;

const olderQuery = `query OlderReceipts($id: ID!, $before: Cursor) { node(id: $id) { ... on Session {
  contextReceipts(last: ${receiptPage}, before: $before, orderBy: [{field: TURN}, {field: CREATED_AT}]) { ${receiptConnection} } } } }`;

// The builds a link or a trace names that the pages loaded do not hold.
const byIdQuery = `query ReceiptsByID($id: ID!, $ids: [ID!]) { node(id: $id) { ... on Session {
  contextReceipts(first: 10, where: {idIn: $ids}, orderBy: [{field: TURN}, {field: CREATED_AT}]) { edges { node { ${receiptHeadFields} } } } } } }`;
// The build of a node before one: in an earlier turn, or earlier in the same turn.
const previousQuery = `query PreviousBuild($id: ID!, $node: ContextNode!, $turn: Int!, $at: Time!) { node(id: $id) { ... on Session {
  contextReceipts(last: 1, where: {node: $node, or: [{turnLT: $turn}, {turn: $turn, createdAtLT: $at}]}, orderBy: [{field: TURN}, {field: CREATED_AT}]) {
    edges { node { ${receiptHeadFields} } } } } } }`;

// Sections keep one colour each across every bar of the chart.
const palette = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];

function label(r) {
  return `Turn ${r.turn}`;
}

/** stacked draws one build's sections side by side, scaled to the largest
 * build charted (scale) so that sections are not slivers of a budget few
 * builds come near; a marker shows the budget where it falls on the scale. */
function stacked(r, colour, scale) {
  return h('span', { class: 'stack', role: 'img', 'aria-label': `${num(r.tokenCount)} of ${num(r.budget)} tokens` },
    r.sections.map((s) => h('span', {
      class: 'stack-part', title: `${s.name}: ${num(s.tokenCount)} tokens${s.truncated ? ' (truncated)' : ''}`,
      style: `width: ${(s.tokenCount / scale) * 100}%; background: ${colour(s.name)}`,
    })),
    r.budget <= scale ? h('span', { class: 'budget-marker', title: `budget ${num(r.budget)}`, style: `left: ${(r.budget / scale) * 100}%` }) : null);
}

// trendBuilds is how many of the newest builds the sections' trend shows.
const trendBuilds = 12;

/** sectionTrend is each section's tokens across the newest builds of a
 * node, one column a build, so a section that grows or vanishes shows. */
function sectionTrend(builds, names) {
  const shown = builds.slice(-trendBuilds);
  const tokens = (r, name) => r.sections.find((s) => s.name === name)?.tokenCount;
  // Its own scroll box: twelve columns do not fit a phone.
  return h('div', { class: 'trend-box', tabindex: '0', role: 'region', 'aria-label': 'Each section\'s tokens by turn' }, h('table', { class: 'diff-sections', id: 'receipt-trend' },
    h('caption', { class: 'hint' }, `Each section's tokens in the newest ${shown.length} builds`),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Section'), shown.map((r) => h('th', { scope: 'col' }, `T${r.turn}`)))),
    h('tbody', {}, names.map((name) => h('tr', { dataset: { section: name } },
      h('th', { scope: 'row' }, name),
      shown.map((r) => { const n = tokens(r, name); return h('td', {}, n == null ? '—' : num(n)); }))))));
}

/** receiptRow is one build's bar, a link to its turn's trace, and its
 * prompt, whose text prompt() fills when it is opened. */
function receiptRow(r, colour, scale, prompt, fact, traceLink) {
  const pre = h('pre', { class: 'prompt', tabindex: '0' });
  const state = fact && fact.has(r.id) ? heldState(fact.get(r.id)) : null;
  return h('li', { class: 'receipt', dataset: { receipt: r.id, turn: r.turn, fact: state ? state[0] : null } },
    h('div', { class: 'ctx-line' },
      h('span', { class: 'ctx-name' }, label(r),
        state ? h('span', { class: `fact-mark fact-${state[0]}`, title: `The fact followed: ${state[0]}` }, ` ${state[1]}`) : null),
      stacked(r, colour, scale),
      h('span', { class: 'ctx-count' }, `${num(r.tokenCount)} / ${num(r.budget)} tokens · `, traceLink(r))),
    h('details', { dataset: { key: `receipt-${r.id}` }, ontoggle: (ev) => { if (ev.target.open) prompt(r, pre); } },
      h('summary', {}, `The ${r.node} prompt as sent at turn ${r.turn} · `, when(r.createdAt)),
      h('p', { class: 'hint' }, `${r.tokenizer} · SHA-256 `, h('code', {}, r.textSha256.slice(0, 16)), '…',
        r.truncatedTurns ? ` · ${num(r.truncatedTurns)} older turns left out` : ''),
      r.notes.length ? h('ul', { class: 'notes' }, r.notes.map((n) => h('li', {}, n))) : null,
      pre));
}

const factQuery = `query FactTrace($id: ID!, $fact: FactInput!, $nodes: [ContextNode!]) { node(id: $id) { ... on Session {
  factTrace(fact: $fact, nodes: $nodes) { more receipts { receiptID turn held }
    firstLoss { heldIn { receiptID turn } lostIn { receiptID turn } diff { ${diffFields} } } } } } }`;

/** heldState names whether a build held the fact, and its sign. */
function heldState(held) {
  return held == null ? ['unknown', '?'] : held ? ['held', '✓'] : ['missing', '✗'];
}

/** factMarks shows, turn by turn, whether each build held the fact. */
function factMarks(trace) {
  return h('ol', { class: 'fact-turns', id: 'fact-turns' }, trace.receipts.map((r) => {
    const [state, sign] = heldState(r.held);
    return h('li', { class: `fact-${state}`, dataset: { turn: r.turn, held: state }, title: `Turn ${r.turn}: ${state}` }, `T${r.turn} ${sign}`);
  }));
}

/** receiptsPanel shows a session's recorded builds, compares two of one
 * node, and follows a fact through them: which turns' prompts held it and
 * the diff of the build that lost it. hooks.openTurn(n, receiptID) shows a
 * build's turn with its trace open. */
export function receiptsPanel(sessionID, hooks) {
  let receipts = [];
  let node = '';
  let generation = 0;
  let tracing = 0;
  let total = 0;
  let page = null; // pageInfo of the oldest page loaded
  let held = null; // the fact followed last: its node, and each build's held (true, false, or null: unknown)
  // A prompt's text is read when it is first opened, not with the chart: a
  // session's builds run to hundreds of KB of text that few are read.
  const texts = new Map(); // receipt id → the promise of its text (null: only the hash was kept)
  const range = h('p', { class: 'hint', id: 'receipt-range' });
  const older = h('button', { type: 'button', id: 'receipt-older', onclick: loadOlder }, 'Load older builds');
  const nodeSelect = h('select', { id: 'receipt-node', onchange: () => { node = nodeSelect.value; render(); } });
  const fromSelect = h('select', { id: 'receipt-from' });
  const toSelect = h('select', { id: 'receipt-to' });
  const chart = h('div', { id: 'receipt-chart' });
  const diff = h('div', { id: 'receipt-diff', 'aria-live': 'polite' });
  const factBox = h('input', { id: 'fact-text', type: 'search', placeholder: 'a text or a ref, e.g. peanut allergy or recipe_1', 'aria-label': 'Fact to follow' });
  const factResult = h('div', { id: 'fact-result', 'aria-live': 'polite' });
  const factForm = h('form', { class: 'receipt-controls', id: 'fact-form', onsubmit: (ev) => { ev.preventDefault(); trace(); } },
    h('label', {}, 'Follow a fact ', factBox), h('button', { type: 'submit', id: 'fact-trace' }, 'Follow'));
  const controls = h('div', { class: 'receipt-controls' },
    h('label', {}, 'Node ', nodeSelect),
    h('label', {}, 'Compare ', fromSelect),
    h('label', {}, 'with ', toSelect),
    h('button', { type: 'button', id: 'receipt-compare', onclick: compare }, 'Compare'));
  const body = h('div', {}, loading('the recorded builds'));
  const el = h('section', { class: 'card', id: 'section-receipts', tabindex: '-1', 'aria-labelledby': 'heading-receipts' },
    h('h2', { id: 'heading-receipts' }, 'What the model saw'), body);

  /** prompt fills pre with a build's text, read once. */
  async function prompt(r, pre) {
    if (!texts.has(r.id)) {
      texts.set(r.id, gql(textQuery, { id: r.id, session: sessionID }).then((d) => d.contextReceipt?.text ?? null));
    }
    if (!pre.firstChild) replace(pre, 'Loading the prompt…');
    try {
      const text = await texts.get(r.id);
      replace(pre, text ?? '(only the text\'s SHA-256 was kept: the server runs with -receipt-hash-only, or the text was past its retention)');
    } catch (err) {
      texts.delete(r.id);
      replace(pre, `Could not load the prompt: ${describe(err)} Close it and open it again to retry.`);
    }
  }

  /** traceLink is a build's link to its turn's trace, the build marked there. */
  function traceLink(r) {
    return h('a', {
      href: focusHref(sessionID, { turn: r.turn }), class: 'receipt-trace', 'aria-label': `Turn ${r.turn}'s trace, at this ${r.node} build`,
      onclick: (ev) => { ev.preventDefault(); hooks.openTurn(r.turn, r.id); },
    }, 'trace');
  }

  /** merge takes builds in, in their place, once each. */
  function merge(nodes) {
    const order = (a, b) => a.turn - b.turn || a.createdAt.localeCompare(b.createdAt);
    receipts = [...receipts.filter((r) => !nodes.some((n) => n.id === r.id)), ...nodes].sort(order);
  }

  /** ensure loads the builds of ids that no page loaded: a link's or a trace's may be older. */
  async function ensure(ids) {
    const missing = ids.filter((id) => !receipts.some((r) => r.id === id));
    if (!missing.length) return;
    merge((await gql(byIdQuery, { id: sessionID, ids: missing })).node.contextReceipts.edges.map((e) => e.node));
  }

  /** openBuild shows a build's row with its prompt open, loading it if no page did. */
  async function openBuild(id) {
    try {
      await ensure([id]);
    } catch (err) {
      replace(diff, errorBox(`Could not read the build: ${describe(err)}`, () => openBuild(id)));
      return;
    }
    const r = receipts.find((x) => x.id === id);
    if (!r) { replace(diff, errorBox('No build of this session has this id.')); return; }
    node = r.node;
    render();
    const row = chart.querySelector(`.receipt[data-receipt="${CSS.escape(id)}"]`);
    if (!row) return;
    chart.querySelectorAll('.receipt.linked').forEach((x) => x.classList.remove('linked'));
    row.classList.add('linked');
    row.querySelector('details').open = true;
    row.scrollIntoView({ block: 'start' });
  }

  /** diffBefore compares a build with its node's build before it, at any depth. */
  async function diffBefore(r) {
    replace(diff, loading('the build before'));
    diff.scrollIntoView({ block: 'start' });
    let before;
    try {
      [before] = (await gql(previousQuery, { id: sessionID, node: r.node, turn: r.turn, at: r.createdAt })).node.contextReceipts.edges.map((e) => e.node);
      await ensure([r.id]);
    } catch (err) {
      replace(diff, errorBox(`Could not read the build before: ${describe(err)}`, () => diffBefore(r)));
      return;
    }
    if (!before) { replace(diff, h('p', { class: 'hint', id: 'receipt-diff-none' }, `Turn ${r.turn}'s ${r.node} build is the node's first: there is nothing to compare it with.`)); return; }
    merge([before]);
    await compareBuilds(before.id, r.id);
  }

  /** compareBuilds shows the diff of two builds of one node, loaded. */
  async function compareBuilds(from, to) {
    node = receipts.find((x) => x.id === to).node;
    render();
    fromSelect.value = from;
    toSelect.value = to;
    await compare();
    diff.scrollIntoView({ block: 'start' });
  }

  function options(select, list, chosen) {
    replace(select, list.map((r) => h('option', { value: r.id, selected: r.id === chosen }, `${label(r)} · ${num(r.tokenCount)} tokens`)));
  }

  function render() {
    if (!receipts.length) {
      replace(body, empty('No build was recorded yet: a runtime records the prompt it sends with recordContext.'));
      return;
    }
    const nodes = [...new Set(receipts.map((r) => r.node))];
    if (!nodes.includes(node)) node = nodes[0];
    replace(nodeSelect, nodes.map((n) => h('option', { value: n, selected: n === node }, n)));
    const mine = receipts.filter((r) => r.node === node);
    const names = [...new Set(mine.flatMap((r) => r.sections.map((s) => s.name)))];
    const colour = (name) => palette[names.indexOf(name) % palette.length];
    const keepFrom = mine.some((r) => r.id === fromSelect.value) ? fromSelect.value : mine[Math.max(0, mine.length - 2)].id;
    const keepTo = mine.some((r) => r.id === toSelect.value) ? toSelect.value : mine[mine.length - 1].id;
    options(fromSelect, mine, keepFrom);
    options(toSelect, mine, keepTo);
    const scale = Math.max(1, ...mine.map((r) => r.tokenCount));
    keepOpen(chart,
      h('p', { class: 'hint' }, `${mine.length} ${node} builds, each section's tokens, scaled to the largest build (${num(scale)} tokens); the mark is the budget:`),
      h('ul', { class: 'legend' }, names.map((n) => h('li', {}, h('span', { class: 'swatch', style: `background: ${colour(n)}` }), n))),
      h('ol', { class: 'receipts' }, mine.map((r) => receiptRow(r, colour, scale, prompt, held && held.node === node ? held.byReceipt : null, traceLink))),
      sectionTrend(mine, names));
    const turns = receipts.map((r) => r.turn);
    replace(range, `Builds of turns ${Math.min(...turns)}–${Math.max(...turns)}: ${num(receipts.length)} of ${num(total)} recorded. `,
      page.hasPreviousPage ? older : null);
    if (body.firstChild !== controls) replace(body, controls, range, chart, diff, h('h3', {}, 'When did the prompts stop holding a fact?'), factForm, factResult);
  }

  /** loadOlder prepends the page of builds before the oldest loaded. */
  async function loadOlder() {
    older.disabled = true;
    try {
      const conn = (await gql(olderQuery, { id: sessionID, before: page.startCursor })).node.contextReceipts;
      merge(conn.edges.map((e) => e.node)); // a link may have loaded one of them already
      page = conn.pageInfo;
      total = conn.totalCount;
      render();
    } catch (err) {
      replace(range, errorBox(`Could not load older builds: ${describe(err)}`, loadOlder));
    } finally {
      older.disabled = false;
    }
  }

  /** trace follows the typed fact through this node's builds. */
  async function trace() {
    const text = factBox.value.trim();
    if (!text) return;
    const mine = ++tracing;
    replace(factResult, loading('the trace'));
    try {
      const t = (await gql(factQuery, { id: sessionID, fact: factInput(text), nodes: [node] })).node.factTrace;
      if (mine !== tracing) return;
      const loss = t.firstLoss;
      linkParams({ fact: text, node });
      held = { node, byReceipt: new Map(t.receipts.map((r) => [r.receiptID, r.held])) };
      render();
      replace(factResult,
        h('p', { id: 'fact-where' }, `${node}: ${whereHeld(t)}.`),
        factMarks(t),
        loss
          ? h('p', { id: 'fact-loss' }, `Held at turn ${loss.heldIn.turn}, missing from turn ${loss.lostIn.turn}. `,
            h('button', { type: 'button', id: 'fact-diff', onclick: () => showLoss(loss) }, `Compare turn ${loss.heldIn.turn} with turn ${loss.lostIn.turn}`))
          : h('p', { id: 'fact-loss', class: 'hint' }, t.receipts.some((r) => r.held) ? `Every ${node} build since it appeared still holds it.` : `No ${node} build held it.`),
        t.more ? h('p', { class: 'hint' }, 'Only the first 2,000 builds were read.') : null);
    } catch (err) {
      if (mine !== tracing) return;
      replace(factResult, errorBox(`Could not follow the fact: ${describe(err)}`, trace));
    }
  }

  /** showLoss shows the diff the trace brought of the build that held a
   * fact and the one that lost it: at any depth, loaded or not. */
  function showLoss(loss) {
    generation++;
    linkDiff(loss.heldIn.receiptID, loss.lostIn.receiptID);
    showDiff(loss.diff);
    diff.scrollIntoView({ block: 'start' });
  }

  /** linkParams names in the address the fact followed (?fact=…&node=…),
   * for a link to it; replaceState, so the view is not rebuilt. */
  function linkParams(values) {
    const [path, query] = location.hash.split('?');
    if (!path.startsWith(`#/sessions/${sessionID}`)) return;
    const params = new URLSearchParams(query || '');
    for (const [k, v] of Object.entries(values)) params.set(k, v);
    history.replaceState(history.state, '', `${path}?${params}`);
  }

  function linkDiff(from, to) {
    focusOn(sessionID, { diff: `${from},${to}` });
  }

  /** followLinkedFact follows the fact a link carries (?fact=…&node=…),
   * once: a fact search's result opens the session with it followed. */
  let linkedFact = new URLSearchParams(location.hash.split('?')[1] || '');
  function followLinkedFact() {
    const text = linkedFact?.get('fact');
    const wanted = linkedFact?.get('node');
    linkedFact = null;
    if (!text || !receipts.length) return;
    if (receipts.some((r) => r.node === wanted)) { node = wanted; render(); }
    factBox.value = text;
    trace().then(() => factForm.scrollIntoView({ block: 'start' }));
  }

  /** openLinked opens what a deep link names, once: a build (?build=ID),
   * its prompt open, or the diff of two builds (?diff=FROM,TO), at any depth. */
  let linked = new URLSearchParams(location.hash.split('?')[1] || '');
  async function openLinked() {
    const build = linked?.get('build');
    const pair = linked?.get('diff');
    linked = null;
    if (build) openBuild(build);
    if (!pair) return;
    const [from, to] = pair.split(',');
    try {
      await ensure([from, to]);
    } catch (err) {
      replace(diff, errorBox(`Could not read the builds of the linked diff: ${describe(err)}`));
      return;
    }
    const a = receipts.find((r) => r.id === from), b = receipts.find((r) => r.id === to);
    if (!a || !b || a.node !== b.node) { replace(diff, errorBox('The linked diff does not name two builds of one node of this session.')); return; }
    compareBuilds(from, to);
  }

  async function compare() {
    linkDiff(fromSelect.value, toSelect.value);
    const mine = ++generation;
    replace(diff, loading('the diff'));
    try {
      const d = (await gql(diffQuery, { from: fromSelect.value, to: toSelect.value })).contextReceiptDiff;
      if (mine !== generation) return;
      showDiff(d);
    } catch (err) {
      if (mine !== generation) return;
      replace(diff, errorBox(`Could not compare the builds: ${describe(err)}`, compare));
    }
  }

  function showDiff(d) {
    replace(diff, ...diffView(d));
  }

  return {
    el,
    /** show renders the session's receipts (a connection, oldest turn first). */
    show(conn) {
      receipts = conn.edges.map((e) => e.node);
      page = conn.pageInfo;
      total = conn.totalCount;
      render();
      openLinked();
      followLinkedFact();
    },
    /** add takes in the builds live events named, in their place, and the session's count of builds. */
    add(nodes, count) {
      if (!page) return; // not shown yet: the first show has them
      merge(nodes);
      total = count;
      render();
    },
    openBuild,
    diffBefore,
    /** textsCleared forgets the texts read: the server cleared them (an open prompt reads it again). */
    textsCleared() {
      texts.clear();
      if (page) render();
    },
  };
}
