// The turn timeline (messages, summaries, what each turn did) and the event
// log (the session's audit trail, newest first, growing live).

import { describe, gql } from './api.js';
import { badge, empty, focusHref, focusOn, h, keepOpen, num, replace, when } from './dom.js';
import { eventFields, eventRow } from './eventrow.js';
import { totalsFields, turnTraces } from './trace.js';

/** turnFields is what the timeline shows of each turn: its trace's totals too, not the trace. */
export const turnFields = `id number status userMessage assistantMessage assistantSummary userTokens assistantTokens startedAt completedAt ${totalsFields}
  executionSummary { decision goal phase userExpressed blockedReason steps { step kind description outcome refs } curation { retained { ref reason } demoted } }`;

/** turnPage is how many turns the timeline shows until the admin pages back; a page of older turns or events is as long. */
export const turnPage = 50;
const pageSize = turnPage;
const olderTurns = `query OlderTurns($id: ID!, $before: Cursor!) {
  session(id: $id) { turns(last: ${pageSize}, before: $before, orderBy: [{field: NUMBER}]) { pageInfo { hasPreviousPage startCursor } edges { cursor node { ${turnFields} } } } }
}`;
const olderEvents = `query OlderEvents($id: ID!, $before: Cursor!) {
  session(id: $id) { events(last: ${pageSize}, before: $before, orderBy: [{field: SEQUENCE}]) { pageInfo { hasPreviousPage } edges { cursor node { ${eventFields} } } } }
}`;
// The cursor of an event that came live, without one.
const eventCursor = `query EventCursor($id: ID!, $sequence: Int!) {
  session(id: $id) { events(first: 1, where: {sequence: $sequence}, orderBy: [{field: SEQUENCE}]) { edges { cursor } } }
}`;

function section(id, title, ...body) {
  return h('section', { class: 'card', id: `section-${id}`, tabindex: '-1', 'aria-labelledby': `heading-${id}` },
    h('h2', { id: `heading-${id}` }, title), ...body);
}

function message(who, text, tokens) {
  return h('div', { class: `msg msg-${who}` },
    h('span', { class: 'msg-role' }, `${who}${tokens ? ` · ${num(tokens)} tokens` : ''}`),
    h('p', {}, text));
}

function fact(label, value) {
  return value ? [h('dt', {}, label), h('dd', {}, value)] : null;
}

/** executionSummary shows Think's decision, Act's steps and Understand's curation of a turn. */
function executionSummary(turn, x) {
  const steps = x.steps && x.steps.length
    ? h('ol', { class: 'steps' }, x.steps.map((s) => h('li', { value: s.step },
      s.kind ? h('strong', {}, `${s.kind}: `) : null,
      s.description || '',
      s.outcome ? h('span', { class: 'outcome' }, ` → ${s.outcome}`) : null,
      s.refs && s.refs.length ? [' ', s.refs.map((r) => h('code', { class: 'tier-ref' }, r))] : null)))
    : null;
  const cur = x.curation;
  const curation = cur && ((cur.retained && cur.retained.length) || (cur.demoted && cur.demoted.length))
    ? h('ul', { class: 'curation' },
      (cur.retained || []).map((r) => h('li', {}, 'kept ', h('code', {}, r.ref), `: ${r.reason}`)),
      (cur.demoted || []).map((r) => h('li', {}, 'demoted ', h('code', {}, r))))
    : null;
  return h('details', { class: 'exec', dataset: { key: `exec-${turn.number}` }, open: turn.status === 'OPEN' },
    h('summary', {}, 'Execution summary', x.decision ? `: ${x.decision}` : ''),
    h('dl', { class: 'facts compact' },
      fact('Decision', x.decision), fact('Goal', x.goal), fact('Phase', x.phase),
      fact('User expressed', x.userExpressed), fact('Blocked', x.blockedReason),
      fact('Steps', steps), fact('Curation', curation)));
}

function turnItem(t, sessionID, traces) {
  return h('li', { class: `turn turn-${t.status.toLowerCase()}`, dataset: { turn: t.number }, id: `turn-${t.number}`, tabindex: '-1' },
    h('div', { class: 'turn-head' },
      // A link to this turn; followed in place (replaceState), so the view is not rebuilt.
      h('a', {
        href: focusHref(sessionID, { turn: t.number }), class: 'turn-link',
        onclick: (ev) => { ev.preventDefault(); focusOn(sessionID, { turn: t.number }); goTo(t.number); },
      }, h('strong', {}, `Turn ${t.number}`)), ' ', badge(t.status), ' ',
      h('span', { class: 'hint' }, when(t.startedAt), t.completedAt ? [' · took ', durationText(t)] : '')),
    message('user', t.userMessage, t.userTokens),
    t.assistantMessage ? message('assistant', t.assistantMessage, t.assistantTokens) : null,
    t.assistantSummary && t.assistantSummary !== t.assistantMessage
      ? h('details', { dataset: { key: `summary-${t.number}` } }, h('summary', {}, 'Assistant summary (what later prompts see)'), h('p', { class: 'summary-text' }, t.assistantSummary))
      : null,
    t.executionSummary ? executionSummary(t, t.executionSummary) : null,
    traces.details(t));
}

/** linkedTurn is the turn the address names (?turn=N), or 0. */
function linkedTurn() {
  return Number.parseInt(new URLSearchParams(location.hash.split('?')[1] || '').get('turn'), 10) || 0;
}

/** goTo scrolls to a shown turn, marks it as the one linked and opens its trace. */
function goTo(n) {
  const el = document.getElementById(`turn-${n}`);
  if (!el) return false;
  document.querySelectorAll('.turn.linked').forEach((x) => x.classList.remove('linked'));
  el.classList.add('linked');
  el.querySelector('details.trace').open = true;
  el.scrollIntoView({ block: 'start' });
  el.focus({ preventScroll: true });
  return true;
}

function durationText(t) {
  const ms = new Date(t.completedAt) - new Date(t.startedAt);
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`;
}

/**
 * timelinePanel shows the session's turns, newest first: the newest page
 * from each load, and below it the older pages the admin asked for with
 * "Show older turns"; say shows its notices, hooks are the traces' links
 * to "What the model saw" (turnTraces).
 */
export function timelinePanel(sessionID, say, hooks) {
  let turns = new Map(); // number → turn
  const cursors = new Map(); // number → Relay cursor, to page back from the oldest shown
  let total = 0;
  let older = { has: false, cursor: null }; // before the oldest turn shown
  let pagedBack = false;
  let scrolledTo = 0;
  let seeking = false; // paging back to the turn the address names
  const traces = turnTraces(sessionID, { ...hooks, say });
  const body = h('div', { id: 'turns' });
  const olderButton = h('button', { type: 'button', class: 'secondary more', id: 'older-turns', hidden: true, onclick: loadOlder }, 'Show older turns');
  const el = section('turns', 'Turns', body, olderButton);

  function draw() {
    olderButton.hidden = !older.has;
    const list = [...turns.values()].sort((a, b) => b.number - a.number);
    if (list.length === 0) { replace(body, empty('No turns yet.')); return; }
    keepOpen(body,
      total > list.length ? h('p', { class: 'hint', id: 'turns-count' }, `The last ${num(list.length)} of ${num(total)} turns.`) : null,
      h('ol', { class: 'timeline' }, list.map((t) => turnItem(t, sessionID, traces))));
    // The address's turn (?turn=N) is marked on every draw, and scrolled to
    // once, when it is first shown (a deep link), older pages read to it.
    const want = linkedTurn();
    document.getElementById(`turn-${want}`)?.classList.add('linked');
    if (want && want !== scrolledTo && !seeking) {
      if (goTo(want)) scrolledTo = want;
      else if (older.has) open(want);
    }
  }

  /** open shows turn n with its trace open, reading older pages until it is
   * shown; receipt, when given, is the build to mark in its trace. */
  async function open(n, receipt) {
    seeking = true;
    try {
      while (!turns.has(n) && older.has) if (!await loadOlder()) return;
    } finally {
      seeking = false;
    }
    if (!turns.has(n)) { say(`Turn ${n} is not in this session.`, 'error'); return; }
    focusOn(sessionID, { turn: n });
    if (receipt) traces.mark(n, receipt);
    goTo(n);
    scrolledTo = n;
  }

  function keep(edge) {
    turns.set(edge.node.number, edge.node);
    cursors.set(edge.node.number, edge.cursor);
  }

  async function loadOlder() {
    olderButton.disabled = true;
    try {
      const conn = (await gql(olderTurns, { id: sessionID, before: older.cursor })).session.turns;
      for (const e of conn.edges) keep(e);
      older = { has: conn.pageInfo.hasPreviousPage, cursor: conn.pageInfo.startCursor };
      pagedBack = true;
      draw();
      return true;
    } catch (err) {
      say(`Could not load older turns: ${describe(err)}`, 'error');
      return false;
    } finally {
      olderButton.disabled = false;
    }
  }

  return {
    el,
    show(conn) {
      traces.forget();
      total = conn.totalCount;
      const page = conn.edges.map((e) => e.node);
      const newestShown = Math.max(0, ...turns.keys());
      // Until the admin pages back, the newest page is the whole list. After,
      // older pages stay, unless more turns came than a page holds between
      // two loads: then the list would have a gap, and starts over.
      if (!pagedBack || (page.length && page[0].number > newestShown + 1)) {
        turns = new Map();
        cursors.clear();
        pagedBack = false;
        older = { has: conn.pageInfo.hasPreviousPage, cursor: conn.pageInfo.startCursor };
      }
      for (const e of conn.edges) keep(e);
      draw();
    },
    open,
    /** event puts a live event into its turn's trace, when that was read. */
    event(ev) { traces.event(ev); },
    /** retrace says which turns' items or model calls live events changed: their open traces are read again. */
    retrace(numbers) { traces.changed(numbers); },
    /** patch applies the turns live events named (edges), and the session's turn count. */
    patch(edges, count) {
      for (const e of edges) keep(e);
      total = count;
      // Until the admin pages back, the newest page is the whole list, as
      // a load shows it: a live turn pushes the oldest out.
      const numbers = [...turns.keys()].sort((a, b) => a - b);
      if (!pagedBack && numbers.length > pageSize) {
        for (const n of numbers.slice(0, numbers.length - pageSize)) { turns.delete(n); cursors.delete(n); }
        older = { has: true, cursor: cursors.get(numbers[numbers.length - pageSize]) };
      }
      draw();
    },
  };
}

// shownMax bounds the event log's rows, so that a long live session does not
// grow the page without end; older events stay a query away.
const shownMax = 200;

/**
 * eventsPanel is the event log, newest first. Rows are inserted one by one
 * and never redrawn, so that a burst of live events costs a row each, and
 * the oldest rows go once there are more than the log holds (shownMax, or
 * what the admin asked for with "Show older events"); say shows its notices.
 */
export function eventsPanel(sessionID, say) {
  const rows = new Map(); // sequence → its <tr>
  const cursors = new Map(); // sequence → Relay cursor, for the events a query read
  let total = 0;
  let limit = shownMax;
  let hasOlder = false; // whether events older than the oldest row exist
  const count = h('p', { class: 'hint', id: 'events-count' });
  const tbody = h('tbody');
  const table = h('table', { class: 'events' },
    h('thead', {}, h('tr', {}, ['#', 'When', 'Kind', 'Payload'].map((c) => h('th', { scope: 'col' }, c)))),
    tbody);
  const body = h('div', { class: 'table-wrap', id: 'events' });
  const olderButton = h('button', { type: 'button', class: 'secondary more', id: 'older-events', hidden: true, onclick: loadOlder }, 'Show older events');
  const el = section('events', 'Event log', count, body, olderButton);

  // insert puts a row where its sequence goes (live events, the usual case,
  // go on top at once) and reports whether the event was new.
  function insert(ev) {
    if (rows.has(ev.sequence)) return false;
    const tr = eventRow(ev, say);
    let next = tbody.firstElementChild;
    while (next && Number(next.dataset.sequence) > ev.sequence) next = next.nextElementSibling;
    tbody.insertBefore(tr, next);
    rows.set(ev.sequence, tr);
    return true;
  }

  function oldest() {
    return tbody.lastElementChild ? Number(tbody.lastElementChild.dataset.sequence) : 0;
  }

  // page takes a connection's events in; when its first event is the oldest
  // row, its pageInfo says whether there are older ones.
  function page(conn) {
    for (const e of conn.edges) {
      cursors.set(e.node.sequence, e.cursor);
      insert(e.node);
    }
    if (conn.edges.length && conn.edges[0].node.sequence === oldest()) hasOlder = conn.pageInfo.hasPreviousPage;
    else if (!conn.edges.length && rows.size === 0) hasOlder = false;
  }

  function trim() {
    while (rows.size > limit) {
      const last = tbody.lastElementChild;
      rows.delete(Number(last.dataset.sequence));
      last.remove();
      hasOlder = true;
    }
  }

  function tell() {
    count.textContent = `${num(total)} events${total > rows.size ? `, the newest ${num(rows.size)} shown` : ''}.`;
    olderButton.hidden = !hasOlder;
    if (rows.size === 0) replace(body, empty('No events.'));
    else if (table.parentNode !== body) replace(body, table);
  }

  async function cursorOf(sequence) {
    if (cursors.has(sequence)) return cursors.get(sequence);
    const edges = (await gql(eventCursor, { id: sessionID, sequence })).session.events.edges;
    return edges.length ? edges[0].cursor : null;
  }

  function keep(edge) {
    turns.set(edge.node.number, edge.node);
    cursors.set(edge.node.number, edge.cursor);
  }

  async function loadOlder() {
    olderButton.disabled = true;
    try {
      const before = await cursorOf(oldest());
      const conn = (await gql(olderEvents, { id: sessionID, before })).session.events;
      page(conn);
      limit = Math.max(limit, rows.size);
      tell();
    } catch (err) {
      say(`Could not load older events: ${describe(err)}`, 'error');
    } finally {
      olderButton.disabled = false;
    }
  }

  return {
    el,
    show(conn) {
      total = conn.totalCount;
      page(conn);
      trim();
      tell();
    },
    /** add shows a live event and says whether it was new. */
    add(ev) {
      if (!insert(ev)) return false;
      total++;
      trim();
      tell();
      return true;
    },
  };
}
