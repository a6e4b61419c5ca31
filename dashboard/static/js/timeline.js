// The turn timeline (messages, summaries, what each turn did) and the event
// log (the session's audit trail, newest first, growing live).

import { badge, empty, h, keepOpen, num, replace, when } from './dom.js';

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

function turnItem(t) {
  return h('li', { class: `turn turn-${t.status.toLowerCase()}`, dataset: { turn: t.number } },
    h('div', { class: 'turn-head' },
      h('strong', {}, `Turn ${t.number}`), ' ', badge(t.status), ' ',
      h('span', { class: 'hint' }, when(t.startedAt), t.completedAt ? [' · took ', durationText(t)] : '')),
    message('user', t.userMessage, t.userTokens),
    t.assistantMessage ? message('assistant', t.assistantMessage, t.assistantTokens) : null,
    t.assistantSummary && t.assistantSummary !== t.assistantMessage
      ? h('details', { dataset: { key: `summary-${t.number}` } }, h('summary', {}, 'Assistant summary (what later prompts see)'), h('p', { class: 'summary-text' }, t.assistantSummary))
      : null,
    t.executionSummary ? executionSummary(t, t.executionSummary) : null);
}

function durationText(t) {
  const ms = new Date(t.completedAt) - new Date(t.startedAt);
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`;
}

/** timelinePanel shows the session's turns, oldest first. */
export function timelinePanel() {
  const body = h('div', { id: 'turns' });
  const el = section('turns', 'Turns', body);
  return {
    el,
    show(conn) {
      const turns = conn.edges.map((e) => e.node);
      if (turns.length === 0) { replace(body, empty('No turns yet.')); return; }
      keepOpen(body,
        conn.totalCount > turns.length ? h('p', { class: 'hint' }, `The last ${num(turns.length)} of ${num(conn.totalCount)} turns.`) : null,
        h('ol', { class: 'timeline' }, turns.map(turnItem)));
    },
  };
}

/** payloadText says what an event carries in one line: "read recipe_1, read recipe_2 · table: recipes". */
function payloadText(p) {
  return Object.entries(p || {}).map(([k, v]) => {
    if (k === 'changes' && Array.isArray(v)) return v.map((c) => `${c.action || ''} ${c.ref || ''}`.trim()).join(', ');
    return `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`;
  }).join(' · ');
}

// shownMax bounds the event log's rows, so that a long live session does not
// grow the page without end; older events stay a query away.
const shownMax = 200;

function eventRow(ev) {
  const text = payloadText(ev.payload);
  return h('tr', { dataset: { sequence: ev.sequence, kind: ev.kind } },
    h('td', { class: 'num' }, ev.sequence),
    h('td', {}, when(ev.createdAt)),
    h('td', {}, h('code', {}, ev.kind)),
    h('td', { class: 'payload' }, !text ? h('span', { class: 'hint' }, '—')
      : h('details', {},
        h('summary', {}, text.length > 160 ? `${text.slice(0, 160)}…` : text),
        h('pre', { class: 'json' }, JSON.stringify(ev.payload, null, 2)))));
}

/**
 * eventsPanel is the event log, newest first. Rows are inserted one by one
 * and never redrawn, so that a burst of live events costs a row each, and
 * the oldest rows go once there are more than shownMax.
 */
export function eventsPanel() {
  const rows = new Map(); // sequence → its <tr>
  let total = 0;
  const count = h('p', { class: 'hint', id: 'events-count' });
  const tbody = h('tbody');
  const table = h('table', { class: 'events' },
    h('thead', {}, h('tr', {}, ['#', 'When', 'Kind', 'Payload'].map((c) => h('th', { scope: 'col' }, c)))),
    tbody);
  const body = h('div', { class: 'table-wrap', id: 'events' });
  const el = section('events', 'Event log', count, body);

  // insert puts a row where its sequence goes (live events, the usual case,
  // go on top at once) and reports whether the event was new.
  function insert(ev) {
    if (rows.has(ev.sequence)) return false;
    const tr = eventRow(ev);
    let next = tbody.firstElementChild;
    while (next && Number(next.dataset.sequence) > ev.sequence) next = next.nextElementSibling;
    tbody.insertBefore(tr, next);
    rows.set(ev.sequence, tr);
    return true;
  }

  function trim() {
    while (rows.size > shownMax) {
      const oldest = tbody.lastElementChild;
      rows.delete(Number(oldest.dataset.sequence));
      oldest.remove();
    }
  }

  function tell() {
    count.textContent = `${num(total)} events${total > rows.size ? `, the newest ${num(rows.size)} shown` : ''}.`;
    if (rows.size === 0) replace(body, empty('No events.'));
    else if (table.parentNode !== body) replace(body, table);
  }

  return {
    el,
    show(conn) {
      total = conn.totalCount;
      for (const e of conn.edges) insert(e.node);
      trim();
      tell();
    },
    add(ev) {
      if (!insert(ev)) return;
      total++;
      trim();
      tell();
    },
  };
}
