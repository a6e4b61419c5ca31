// Which sessions' prompts held a fact: a search across sessions over the
// builds runtimes recorded (sessionsHoldingFact), a page of receipts at a
// time, newest first, so that a page costs the same at any size. Each
// session found says at which turns its builds held the fact and where they
// lost it, and its link carries the fact into the session's page.

import { describe, gql } from './api.js';
import { errorBox, h, loading, num, replace } from './dom.js';

const searchQuery = `query SessionsHoldingFact($fact: FactInput!, $node: ContextNode!, $after: String) {
  sessionsHoldingFact(fact: $fact, node: $node, after: $after) { sessions { id externalKey tenant } scanned next } }`;

// One request for the traces of many sessions: nodes(ids) is one field, so
// a page of sessions costs one round trip, not one each.
const tracesQuery = `query FactTraces($ids: [ID!]!, $fact: FactInput!, $nodes: [ContextNode!]) {
  nodes(ids: $ids) { ... on Session { id factTrace(fact: $fact, nodes: $nodes) {
    more receipts { turn held } firstLoss { heldIn { turn } lostIn { turn } } } } } }`;

/** nodes are the pipeline nodes whose builds a fact is followed through. */
export const nodes = ['THINK', 'UNDERSTAND', 'ACT', 'REPLY'];

// A fact is a ref when it is spelled like one (recipe_1, gen_recipe_2).
const refShape = /^[a-z][a-z0-9_]*_[0-9]+$/;

/** factInput is the API's FactInput for what the admin typed: a ref or a text. */
export function factInput(text) {
  return refShape.test(text) ? { ref: text } : { text };
}

/** factHref is the link to a session's page that follows the fact through
 * the node's builds when it opens: #/sessions/<id>?node=THINK&fact=peanut. */
export function factHref(sessionID, node, text) {
  return `#/sessions/${encodeURIComponent(sessionID)}?${new URLSearchParams({ node, fact: text })}`;
}

/** factTraces reads the trace of a fact through the node's builds in each
 * session, in one request, as a map from session id to its trace. */
export async function factTraces(ids, text, node) {
  if (!ids.length) return new Map();
  const found = (await gql(tracesQuery, { ids, fact: factInput(text), nodes: [node] })).nodes;
  return new Map(found.filter((s) => s && s.factTrace).map((s) => [s.id, s.factTrace]));
}

/** turnRanges says a list of turns in ranges: 1–3, 7. */
export function turnRanges(turns) {
  const sorted = [...new Set(turns)].sort((a, b) => a - b);
  const parts = [];
  for (let i = 0; i < sorted.length; i++) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    parts.push(i === j ? `${sorted[i]}` : `${sorted[i]}–${sorted[j]}`);
    i = j;
  }
  return parts.join(', ');
}

/** whereHeld says where a trace held the fact and where it was first lost:
 * "held at turns 1–3 · lost at turn 4". */
export function whereHeld(trace) {
  const held = trace.receipts.filter((r) => r.held).map((r) => r.turn);
  if (!held.length) {
    // A build that kept only its text's hash, with no tier naming the fact, cannot tell.
    return trace.receipts.some((r) => r.held == null) ? 'not known: the builds kept only their texts’ hashes' : 'never held';
  }
  const loss = trace.firstLoss;
  return `held at ${held.length === 1 ? 'turn' : 'turns'} ${turnRanges(held)} · ${loss ? `lost at turn ${loss.lostIn.turn}` : 'never lost'}${trace.more ? ' (first 2,000 builds)' : ''}`;
}

/** factSearchPanel asks which sessions' builds of a node held a fact, and
 * reads older receipts on demand. */
export function factSearchPanel() {
  const input = h('input', { id: 'held-text', type: 'search', placeholder: 'peanut allergy, or a ref such as recipe_1', 'aria-label': 'Fact' });
  const node = h('select', { id: 'held-node', 'aria-label': 'Node' }, nodes.map((n) => h('option', { value: n }, n)));
  const results = h('div', { id: 'held-results', 'aria-live': 'polite' });
  let found = [];
  let traces = new Map();
  let scanned = 0;
  let generation = 0;
  const el = h('details', { class: 'card', id: 'held-search' },
    h('summary', {}, 'Which sessions\u2019 prompts held a fact?'),
    h('form', { class: 'receipt-controls', onsubmit: (ev) => { ev.preventDefault(); search(null); } },
      h('label', {}, 'Fact ', input), h('label', {}, 'in ', node), h('button', { type: 'submit', id: 'held-go' }, 'Search')),
    results);

  async function search(after) {
    const text = input.value.trim();
    if (!text) return;
    const mine = ++generation;
    const chosen = node.value;
    if (!after) { found = []; scanned = 0; traces = new Map(); }
    replace(results, loading('the recorded builds'));
    try {
      const page = (await gql(searchQuery, { fact: factInput(text), node: chosen, after })).sessionsHoldingFact;
      if (mine !== generation) return;
      const fresh = page.sessions.filter((s) => !found.some((f) => f.id === s.id));
      found.push(...fresh);
      scanned += page.scanned;
      // Where each new session held the fact and lost it; a failure here
      // leaves the sessions found, without their turns.
      let traceError = '';
      try {
        for (const [id, t] of await factTraces(fresh.map((s) => s.id), text, chosen)) traces.set(id, t);
      } catch (err) {
        traceError = `Could not read where they held it: ${describe(err)}`;
      }
      if (mine !== generation) return;
      replace(results,
        h('p', { class: 'hint', id: 'held-summary' },
          `${num(found.length)} sessions in the newest ${num(scanned)} ${chosen} builds${page.next ? '' : ' (every build read)'}.`),
        h('ul', { id: 'held-sessions' }, found.map((s) => h('li', { dataset: { session: s.id } },
          h('a', { href: factHref(s.id, chosen, text) }, s.externalKey), ` · ${s.tenant}`,
          traces.has(s.id) ? [' · ', h('span', { class: 'held-where' }, whereHeld(traces.get(s.id)))] : null))),
        traceError ? h('p', { class: 'error', role: 'alert' }, traceError) : null,
        page.next ? h('button', { type: 'button', class: 'secondary', id: 'held-more', onclick: () => search(page.next) }, 'Search older builds') : null);
    } catch (err) {
      if (mine !== generation) return;
      replace(results, errorBox(`Could not search: ${describe(err)}`, () => search(after)));
    }
  }

  return { el };
}
