// Which sessions' prompts held a fact: a search across sessions over the
// builds runtimes recorded (sessionsHoldingFact), a page of receipts at a
// time, newest first, so that a page costs the same at any size.

import { describe, gql } from './api.js';
import { errorBox, h, loading, num, replace } from './dom.js';

const searchQuery = `query SessionsHoldingFact($fact: FactInput!, $node: ContextNode!, $after: String) {
  sessionsHoldingFact(fact: $fact, node: $node, after: $after) { sessions { id externalKey tenant } scanned next } }`;

const nodes = ['THINK', 'UNDERSTAND', 'ACT', 'REPLY'];

// A fact is a ref when it is spelled like one (recipe_1, gen_recipe_2).
const refShape = /^[a-z][a-z0-9_]*_[0-9]+$/;

/** factSearchPanel asks which sessions' builds of a node held a fact, and
 * reads older receipts on demand. */
export function factSearchPanel() {
  const input = h('input', { id: 'held-text', type: 'search', placeholder: 'peanut allergy, or a ref such as recipe_1', 'aria-label': 'Fact' });
  const node = h('select', { id: 'held-node', 'aria-label': 'Node' }, nodes.map((n) => h('option', { value: n }, n)));
  const results = h('div', { id: 'held-results', 'aria-live': 'polite' });
  let found = [];
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
    if (!after) { found = []; scanned = 0; }
    replace(results, loading('the recorded builds'));
    try {
      const fact = refShape.test(text) ? { ref: text } : { text };
      const page = (await gql(searchQuery, { fact, node: node.value, after })).sessionsHoldingFact;
      if (mine !== generation) return;
      for (const s of page.sessions) if (!found.some((f) => f.id === s.id)) found.push(s);
      scanned += page.scanned;
      replace(results,
        h('p', { class: 'hint', id: 'held-summary' },
          `${num(found.length)} sessions in the newest ${num(scanned)} ${node.value} builds${page.next ? '' : ' (every build read)'}.`),
        h('ul', { id: 'held-sessions' }, found.map((s) => h('li', { dataset: { session: s.id } },
          h('a', { href: `#/sessions/${encodeURIComponent(s.id)}?node=${node.value}` }, s.externalKey), ` · ${s.tenant}`))),
        page.next ? h('button', { type: 'button', class: 'secondary', id: 'held-more', onclick: () => search(page.next) }, 'Search older builds') : null);
    } catch (err) {
      if (mine !== generation) return;
      replace(results, errorBox(`Could not search: ${describe(err)}`, () => search(after)));
    }
  }

  return { el };
}
