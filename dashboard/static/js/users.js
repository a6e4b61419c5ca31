// One user across their sessions (#/users/<userID>?tenant=acme): the
// sessions their runtime opened for them, their turns, the tokens, and what
// the prompts sent for them held (each session's newest recorded build, and
// a fact followed through every session's builds). Without a tenant it
// shows the user id in every tenant the key sees: the same id in two
// tenants is two people, and each row names its tenant.

import { describe, gql } from './api.js';
import { badge, empty, errorBox, h, loading, num, plural, replace, when } from './dom.js';
import { factHref, factTraces, nodes, whereHeld } from './facts.js';
import { listHref } from './list.js';
import { dollars } from './trace.js';

/** userPage is how many sessions a page reads, the most recently active first. */
const userPage = 50;
/** recentTurns is how many of each session's newest turns the page reads. */
const recentTurns = 3;
/** turnsShown is how many of those, across sessions, the page lists. */
const turnsShown = 20;

const userQuery = `query UserSessions($where: SessionWhereInput!, $active: SessionWhereInput!, $after: Cursor) {
  active: sessions(where: $active) { totalCount }
  sessions(first: ${userPage}, after: $after, where: $where, orderBy: [{field: LAST_ACTIVE_AT, direction: DESC}]) {
    totalCount pageInfo { hasNextPage endCursor }
    edges { node { id tenant externalKey status domain currentTurn tokenCount createdAt lastActiveAt modelCallTotals { calls cost }
      turns(last: ${recentTurns}, orderBy: [{field: NUMBER}]) { totalCount edges { node {
        id number userMessage assistantMessage userTokens assistantTokens status startedAt } } }
      contextReceipts(last: 1, orderBy: [{field: TURN}, {field: CREATED_AT}]) { totalCount edges { node {
        id turn node tokenCount budget createdAt tiers { active generated retained } } } } } }
  }
}`;

/** userHref is the address of a user's page, in one tenant when given. */
export function userHref(userID, tenant = '') {
  return `#/users/${encodeURIComponent(userID)}${tenant ? `?${new URLSearchParams({ tenant })}` : ''}`;
}

/** clip shortens a message to a line's worth, whole on its title. */
function clip(text, max = 160) {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** userView renders one user's page into root and returns the function that stops it. */
export function userView(root, userID) {
  const tenant = new URLSearchParams(location.hash.split('?')[1] || '').get('tenant') || '';
  let stopped = false;
  let sessions = [];
  let total = 0;
  let active = 0;
  let page = null;
  const where = tenant ? { userID, tenant } : { userID };

  const head = h('section', { class: 'card session-head', 'aria-labelledby': 'user-title' },
    h('h1', { id: 'user-title' }, 'User ', h('code', {}, userID)),
    h('p', { class: 'hint', id: 'user-scope' }, tenant ? ['Tenant ', h('code', {}, tenant)] : 'Every tenant this key sees'),
    h('div', { id: 'user-facts' }, loading('the user\u2019s sessions')));
  const table = h('div', { class: 'table-wrap', id: 'user-sessions' });
  const more = h('button', { type: 'button', class: 'secondary', id: 'user-more', onclick: () => load(page.endCursor) }, 'Load more sessions');
  const turns = h('div', { id: 'user-turns' });
  const held = h('div', { id: 'user-held' });
  const facts = factPanel();

  document.title = `User ${userID} · sessiongraph`;
  replace(root,
    h('p', { class: 'crumbs' }, h('a', { href: listHref() }, '← All sessions')),
    head,
    h('section', { class: 'card', 'aria-labelledby': 'heading-user-sessions' },
      h('h2', { id: 'heading-user-sessions' }, 'Sessions'), table, h('p', { class: 'pager' }, more)),
    h('section', { class: 'card', 'aria-labelledby': 'heading-user-turns' },
      h('h2', { id: 'heading-user-turns' }, 'Their latest turns'), turns),
    h('section', { class: 'card', 'aria-labelledby': 'heading-user-held' },
      h('h2', { id: 'heading-user-held' }, 'What their prompts held'),
      h('p', { class: 'hint' }, 'Each session\u2019s newest recorded build (recordContext) and the refs in its tiers. A ref\u2019s name is its session\u2019s own: recipe_1 of one session is not recipe_1 of another.'),
      held, facts.el));

  async function load(after = null) {
    more.disabled = true;
    try {
      const data = await gql(userQuery, { where, active: { and: [where, { status: 'ACTIVE' }] }, after });
      if (stopped) return;
      const conn = data.sessions;
      const fresh = conn.edges.map((e) => e.node);
      sessions = after ? [...sessions, ...fresh.filter((s) => !sessions.some((o) => o.id === s.id))] : fresh;
      total = conn.totalCount;
      active = data.active.totalCount;
      page = conn.pageInfo;
      render();
    } catch (err) {
      if (stopped) return;
      replace(head.querySelector('#user-facts'), errorBox(`Could not load the user\u2019s sessions: ${describe(err)}`, () => load(after)));
    } finally {
      more.disabled = false;
    }
  }

  function render() {
    const shown = sessions.length < total ? ` (in the ${num(sessions.length)} most recently active of ${num(total)} sessions)` : '';
    const turnCount = sessions.reduce((n, s) => n + s.turns.totalCount, 0);
    const tokens = sessions.reduce((n, s) => n + s.tokenCount, 0);
    const calls = sessions.reduce((n, s) => n + s.modelCallTotals.calls, 0);
    const cost = sessions.reduce((n, s) => n + s.modelCallTotals.cost, 0);
    const fact = (label, value, id) => h('div', {}, h('dt', {}, label), h('dd', { id }, value));
    replace(head.querySelector('#user-facts'),
      h('dl', { class: 'facts' },
        fact('Sessions', `${num(total)} · ${num(active)} active`, 'user-session-count'),
        fact('Turns', num(turnCount), 'user-turn-count'),
        fact('Tokens in their sessions', num(tokens), 'user-tokens'),
        fact('Last active', sessions.length ? when(sessions[0].lastActiveAt) : '—'),
        fact('First seen', sessions.length && !page.hasNextPage ? when(sessions.reduce((a, s) => (s.createdAt < a ? s.createdAt : a), sessions[0].createdAt)) : '—'),
        // Without a model call recorded, the cost is unknown rather than zero.
        fact('Cost of model calls', calls ? `${dollars(cost)} · ${num(calls)} call${calls === 1 ? '' : 's'}` : h('span', { class: 'hint' }, 'no model call recorded'), 'user-cost')),
      shown ? h('p', { class: 'hint', id: 'user-partial' }, `Turns, tokens and cost${shown}.`) : null);
    more.hidden = !page.hasNextPage;
    if (!sessions.length) {
      replace(table, empty(`No session this key sees has user ${userID}${tenant ? ` in tenant ${tenant}` : ''}.`));
      replace(turns);
      replace(held);
      facts.show([]);
      return;
    }
    replace(table, h('table', { class: 'sessions' },
      h('caption', { class: 'sr-only' }, `Sessions of user ${userID}`),
      h('thead', {}, h('tr', {}, ['External key', 'Tenant', 'Status', 'Turns', 'Tokens', 'Last active', 'Domain', 'Created']
        .map((c) => h('th', { scope: 'col', class: ['Turns', 'Tokens'].includes(c) ? 'num' : ['Domain', 'Created'].includes(c) ? 'wide-only' : null }, c)))),
      h('tbody', {}, sessions.map((s) => h('tr', { dataset: { id: s.id, key: s.externalKey } },
        h('td', {}, h('a', { href: `#/sessions/${s.id}` }, s.externalKey)),
        h('td', {}, s.tenant),
        h('td', {}, badge(s.status)),
        h('td', { class: 'num' }, num(s.turns.totalCount)),
        h('td', { class: 'num' }, num(s.tokenCount)),
        h('td', {}, when(s.lastActiveAt)),
        h('td', { class: 'wide-only' }, s.domain),
        h('td', { class: 'wide-only' }, when(s.createdAt)))))));
    renderTurns();
    renderHeld();
    facts.show(sessions.filter((s) => s.contextReceipts.totalCount > 0));
  }

  function renderTurns() {
    const all = sessions.flatMap((s) => s.turns.edges.map((e) => ({ ...e.node, session: s })))
      .sort((a, b) => b.startedAt.localeCompare(a.startedAt)).slice(0, turnsShown);
    if (!all.length) { replace(turns, empty('No turn yet.')); return; }
    replace(turns,
      h('p', { class: 'hint' }, `The newest ${plural(all.length, 'turn')} across their sessions (each session\u2019s last ${recentTurns} read), newest first.`),
      h('ol', { class: 'user-turns' }, all.map((t) => h('li', { class: 'user-turn', dataset: { session: t.session.id, turn: t.number } },
        h('p', { class: 'user-turn-head' },
          h('a', { href: `#/sessions/${t.session.id}?turn=${t.number}` }, `${t.session.externalKey} · turn ${t.number}`), ' ',
          badge(t.status), ' ', when(t.startedAt),
          h('span', { class: 'hint' }, ` · ${num(t.userTokens)} + ${num(t.assistantTokens)} tokens`)),
        h('p', { class: 'msg-user', title: t.userMessage }, h('span', { class: 'sr-only' }, 'User: '), clip(t.userMessage)),
        t.assistantMessage ? h('p', { class: 'msg-assistant hint', title: t.assistantMessage }, h('span', { class: 'sr-only' }, 'Assistant: '), clip(t.assistantMessage)) : null))));
  }

  function renderHeld() {
    const built = sessions.filter((s) => s.contextReceipts.edges.length);
    if (!built.length) { replace(held, empty('No session of theirs recorded a build: a runtime records the prompt it sends with recordContext.')); return; }
    const refs = (list, kind) => (list.length ? list.map((r) => h('code', { class: `tier-ref tier-${kind}` }, r)) : h('span', { class: 'hint' }, '—'));
    replace(held, h('div', { class: 'table-wrap' }, h('table', { class: 'sessions', id: 'user-builds' },
      h('caption', { class: 'sr-only' }, 'Each session\u2019s newest recorded build'),
      h('thead', {}, h('tr', {}, ['Session', 'Newest build', 'Active', 'Generated', 'Retained'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, built.map((s) => {
        const r = s.contextReceipts.edges[0].node;
        return h('tr', { dataset: { session: s.id, receipt: r.id } },
          h('td', {}, h('a', { href: `#/sessions/${s.id}?node=${r.node}` }, s.externalKey)),
          h('td', {}, `${r.node} at turn ${r.turn} · ${num(r.tokenCount)} / ${num(r.budget)} tokens`),
          h('td', { class: 'refs-cell', dataset: { tier: 'active' } }, refs(r.tiers.active, 'active')),
          h('td', { class: 'refs-cell', dataset: { tier: 'generated' } }, refs(r.tiers.generated, 'generated')),
          h('td', { class: 'refs-cell', dataset: { tier: 'retained' } }, refs(r.tiers.retained, 'retained')));
      })))));
  }

  load();
  return () => { stopped = true; };
}

/** factPanel follows a fact through the builds of each of the user's
 * sessions that recorded any, in one request, each with its link. */
function factPanel() {
  let sessions = [];
  let generation = 0;
  const input = h('input', { id: 'user-fact-text', type: 'search', placeholder: 'peanut allergy, or a ref such as recipe_1', 'aria-label': 'Fact to follow' });
  const node = h('select', { id: 'user-fact-node', 'aria-label': 'Node' }, nodes.map((n) => h('option', { value: n }, n)));
  const results = h('div', { id: 'user-fact-results', 'aria-live': 'polite' });
  const form = h('form', { class: 'receipt-controls', onsubmit: (ev) => { ev.preventDefault(); follow(); } },
    h('label', {}, 'Follow a fact ', input), h('label', {}, 'in ', node), h('button', { type: 'submit', id: 'user-fact-go' }, 'Follow'));
  const el = h('div', { id: 'user-fact' }, h('h3', {}, 'Did their prompts hold a fact?'), form, results);

  async function follow() {
    const text = input.value.trim();
    if (!text) return;
    const mine = ++generation;
    const chosen = node.value;
    if (!sessions.length) { replace(results, empty('None of their sessions recorded a build.')); return; }
    replace(results, loading('the traces'));
    try {
      const traces = await factTraces(sessions.map((s) => s.id), text, chosen);
      if (mine !== generation) return;
      replace(results, h('ul', { id: 'user-fact-sessions' }, sessions.map((s) => h('li', { dataset: { session: s.id } },
        h('a', { href: factHref(s.id, chosen, text) }, s.externalKey), ' · ',
        h('span', { class: 'held-where' }, traces.has(s.id) ? whereHeld(traces.get(s.id)) : 'not read')))));
    } catch (err) {
      if (mine !== generation) return;
      replace(results, errorBox(`Could not follow the fact: ${describe(err)}`, follow));
    }
  }

  return {
    el,
    /** show sets the sessions a fact is followed through: those that recorded a build. */
    show(list) { sessions = list; },
  };
}
