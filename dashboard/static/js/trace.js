// A turn's trace, under its place in the timeline: the items the agent
// produced (messages, tool calls with their arguments and outputs,
// reasoning), each node's builds against their budget with the model calls
// they fed, and the turn's events (those whose turn is the turn's). The
// timeline shows a turn's totals (items, calls, latency, cost); the trace
// itself is read when it is opened, and again when a live event changes its
// items, builds or calls, so that a closed trace costs a live event
// nothing; any other event of the turn joins an open trace as it comes,
// from the feed, with no request.

import { describe, gql } from './api.js';
import { bar } from './context.js';
import { badge, empty, errorBox, focusHref, focusOn, h, keepOpen, num, replace } from './dom.js';
import { eventFields, eventRow } from './eventrow.js';

/** totalsFields is what the timeline reads of each turn's model calls. */
export const totalsFields = 'itemCount modelCallTotals { calls failedCalls inputTokens outputTokens latencyMs cost }';

const callFields = 'id model inputTokens outputTokens latencyMs cost finishReason error';
// eventPage bounds the events a trace shows; a turn rarely has more.
const eventPage = 100;
// A turn's events are those whose turn is the turn's (Event.turn: the turn
// the payload names, else the session's current turn when written).
const traceQuery = `query TurnTrace($id: ID!, $turn: Int!) {
  session(id: $id) {
    id
    turns(first: 1, where: {number: $turn}) { edges { node { id items { position kind role name callID arguments content } } } }
    contextReceipts(first: 100, where: {turn: $turn}, orderBy: [{field: CREATED_AT}]) { edges { node { id turn node tokenCount budget createdAt modelCalls { ${callFields} } } } }
    events(first: ${eventPage}, where: {turn: $turn}, orderBy: [{field: SEQUENCE}]) { totalCount edges { node { ${eventFields} } } }
  }
}`;

/** dollars shows a cost in US dollars: to the cent above a dollar, finer below. */
export function dollars(x) {
  if (!x) return '$0';
  return x >= 1 ? `$${x.toFixed(2)}` : `$${Number(x.toPrecision(3))}`;
}

/** millis shows a latency: "850 ms", "1.2 s". */
export function millis(ms) {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`;
}

/** totalsText says a turn's trace in one line: "4 items · 2 model calls, 1 failed · 1.2 s · $0.0123". */
function totalsText(t) {
  const m = t.modelCallTotals;
  // itemCount counts what recordItems added; Turn.items also holds the
  // turn's own messages, when not empty.
  const items = t.itemCount + (t.userMessage ? 1 : 0) + (t.assistantMessage ? 1 : 0);
  const parts = [`${num(items)} item${items === 1 ? '' : 's'}`];
  if (m && m.calls) {
    parts.push(`${num(m.calls)} model call${m.calls === 1 ? '' : 's'}${m.failedCalls ? `, ${num(m.failedCalls)} failed` : ''}`,
      millis(m.latencyMs), dollars(m.cost));
  } else parts.push('no model call recorded');
  return parts.join(' · ');
}

function itemRow(it, callNames) {
  const text = (s) => h('pre', {}, s);
  switch (it.kind) {
    case 'FUNCTION_CALL':
      return h('li', { class: 'item item-call', dataset: { kind: it.kind, callId: it.callID } },
        h('span', { class: 'msg-role' }, `tool call · ${it.callID}`), h('code', {}, it.name), text(it.arguments));
    case 'FUNCTION_CALL_OUTPUT':
      return h('li', { class: 'item item-output', dataset: { kind: it.kind, callId: it.callID } },
        h('span', { class: 'msg-role' }, `output of ${callNames.get(it.callID) || 'call'} · ${it.callID}`), text(it.content));
    case 'MESSAGE':
      return h('li', { class: `item msg msg-${it.role}`, dataset: { kind: it.kind, role: it.role } },
        h('span', { class: 'msg-role' }, it.role), text(it.content));
    default:
      return h('li', { class: 'item', dataset: { kind: it.kind } },
        h('span', { class: 'msg-role' }, it.kind.toLowerCase()), text(it.content));
  }
}

/** budgetCell shows a build's tokens against its budget: the context tab's
 * bar (the budget marked), and the same in words for those who do not see it. */
function budgetCell(r) {
  const share = r.budget ? Math.round((r.tokenCount / r.budget) * 100) : 0;
  return h('td', { class: 'budget' },
    bar(r.tokenCount, Math.max(r.tokenCount, r.budget), { over: r.tokenCount > r.budget, marker: r.budget }),
    h('span', { class: 'num budget-text' }, `${num(r.tokenCount)} / ${num(r.budget)} · ${share}%`));
}

// buildCell names a build's node, with a link to its prompt in "What the
// model saw" (?build=ID) and a button to the diff from the node's build
// before it (?diff=FROM,TO).
function buildCell(r, sessionID, hooks) {
  return h('td', { class: 'build' }, h('code', {}, r.node), h('br'),
    h('a', {
      href: focusHref(sessionID, { build: r.id }), class: 'build-prompt', 'aria-label': `Turn ${r.turn}'s ${r.node} prompt, in What the model saw`,
      onclick: (ev) => { ev.preventDefault(); focusOn(sessionID, { build: r.id }); hooks.openBuild(r.id); },
    }, 'prompt'), ' · ',
    h('button', {
      type: 'button', class: 'as-link build-diff', 'aria-label': `Turn ${r.turn}'s ${r.node} diff from the build before`,
      onclick: () => hooks.diffBefore(r),
    }, 'diff'));
}

// callRows are a build's rows of the calls table: one a model call, or one
// saying the build fed none that was recorded.
function callRows(r, sessionID, hooks) {
  const build = [buildCell(r, sessionID, hooks), budgetCell(r)];
  if (!r.modelCalls.length) {
    return [h('tr', { dataset: { receipt: r.id } }, build, h('td', { colspan: 6, class: 'hint' }, 'no model call recorded'))];
  }
  return r.modelCalls.map((c, i) => h('tr', { class: c.error ? 'call-failed' : '', dataset: { receipt: r.id, call: c.id } },
    i === 0 ? build : [h('td', {}), h('td', {})],
    h('td', {}, c.model),
    h('td', { class: 'num' }, `${num(c.inputTokens)} / ${num(c.outputTokens)}`),
    h('td', { class: 'num' }, millis(c.latencyMs)),
    h('td', { class: 'num' }, dollars(c.cost)),
    h('td', {}, c.error ? [badge('failed'), ' ', h('span', { class: 'call-error' }, c.error)] : (c.finishReason || '—'))));
}

// eventsTable is the turn's events, oldest first as its items are: the
// order in which the turn happened.
function eventsTable(n, got, say) {
  const events = [...got.events.values()].sort((a, b) => a.sequence - b.sequence);
  if (!events.length) return empty('No event recorded in this turn.');
  return [
    got.eventTotal > events.length ? h('p', { class: 'hint' }, `The first ${num(events.length)} of ${num(got.eventTotal)} events.`) : null,
    h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': `Turn ${n}'s events` }, h('table', { class: 'events trace-events' },
      h('thead', {}, h('tr', {}, ['#', 'When', 'Kind', 'Payload'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, events.map((ev) => eventRow(ev, say))))),
  ];
}

function traceBody(n, got, sessionID, hooks) {
  const { items, receipts } = got;
  const callNames = new Map(items.filter((it) => it.kind === 'FUNCTION_CALL').map((it) => [it.callID, it.name]));
  return [
    h('h3', {}, 'Items'),
    items.length ? h('ol', { class: 'items' }, items.map((it) => itemRow(it, callNames))) : empty('No items.'),
    h('h3', {}, 'Builds and model calls'),
    receipts.length
      // Focusable, so that a keyboard scrolls it where it is wider than a phone.
      ? h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': `Turn ${n}'s builds and model calls` }, h('table', { class: 'calls' },
        h('thead', {}, h('tr', {}, ['Build', 'Tokens / budget', 'Model', 'Tokens in / out', 'Latency', 'Cost', 'Finish'].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, receipts.map((r) => callRows(r, sessionID, hooks)))))
      : empty('No build recorded in this turn.'),
    h('h3', {}, 'Events, oldest first'),
    eventsTable(n, got, hooks.say),
  ];
}

/**
 * turnTraces makes each turn's trace for the timeline: details(turn) is its
 * <details>, read on opening; changed(numbers) says which turns' items,
 * builds or model calls live events changed, re-reading those open;
 * event(ev) puts a live event into its turn's trace, when read. hooks:
 * openBuild(receiptID) and diffBefore(receipt) show a build in "What the
 * model saw", say shows notices.
 */
export function turnTraces(sessionID, hooks) {
  const known = new Map(); // turn number → the turn as the timeline last showed it
  const read = new Map(); // turn number → what the trace query read, and the live events since
  const bodies = new Map(); // turn number → the body of its <details> now shown
  const reading = new Map(); // turn number → whether a change came while it was read
  let marked = null; // {turn, receipt}: the build to mark when its trace shows

  // load reads a turn's trace and shows it; a change that comes while it
  // reads has it read again when done.
  async function load(n) {
    if (reading.has(n)) { reading.set(n, true); return; }
    reading.set(n, false);
    try {
      if (!known.has(n)) return;
      const s = (await gql(traceQuery, { id: sessionID, turn: n })).session;
      const turn = s && s.turns.edges[0];
      read.set(n, {
        items: turn ? turn.node.items : [],
        receipts: s ? s.contextReceipts.edges.map((e) => e.node) : [],
        events: new Map(s ? s.events.edges.map((e) => [e.node.sequence, e.node]) : []),
        eventTotal: s ? s.events.totalCount : 0,
      });
      show(n);
    } catch (err) {
      replace(bodies.get(n), errorBox(`Could not read turn ${n}'s trace: ${describe(err)}`, () => load(n)));
    } finally {
      const again = reading.get(n);
      reading.delete(n);
      if (again) load(n);
    }
  }

  function show(n) {
    const body = bodies.get(n);
    const got = read.get(n);
    if (!body || !got) return;
    keepOpen(body, ...traceBody(n, got, sessionID, hooks)); // a payload unfolded stays so when a live event redraws it
    if (marked && marked.turn === n) markBuild(body);
  }

  // markBuild marks the build a receipt of "What the model saw" linked to, and scrolls to it.
  function markBuild(body) {
    const row = body.querySelector(`tr[data-receipt="${CSS.escape(marked.receipt)}"]`);
    marked = null;
    if (!row) return;
    body.querySelectorAll('tr.linked').forEach((x) => x.classList.remove('linked'));
    row.classList.add('linked');
    row.scrollIntoView({ block: 'center' });
  }

  return {
    details(t) {
      known.set(t.number, t);
      const body = h('div', { class: 'trace-body' }, h('p', { class: 'hint' }, 'Reading…'));
      bodies.set(t.number, body);
      const d = h('details', {
        class: 'trace', dataset: { key: `trace-${t.number}`, turn: t.number },
        ontoggle: () => {
          if (!d.open || bodies.get(t.number) !== body) return;
          if (read.has(t.number)) show(t.number);
          else if (!reading.has(t.number)) load(t.number);
        },
      }, h('summary', {}, 'Trace: ', h('span', { class: 'trace-totals' }, totalsText(t))), body);
      return d;
    },
    changed(numbers) {
      for (const n of numbers) {
        read.delete(n);
        const body = bodies.get(n);
        if (body && body.parentNode && body.parentNode.open) load(n);
      }
    },
    /** forget drops every trace read: the whole session is read again (a reset, an import); an open trace reads itself again when redrawn. */
    forget() {
      known.clear();
      read.clear();
    },
    event(ev) {
      const got = Number.isInteger(ev.turn) && read.get(ev.turn);
      if (!got || got.events.has(ev.sequence)) return;
      got.events.set(ev.sequence, ev);
      got.eventTotal++;
      const body = bodies.get(ev.turn);
      if (body && body.parentNode && body.parentNode.open) show(ev.turn);
    },
    /** mark marks a build in turn n's trace once it shows. */
    mark(n, receipt) {
      marked = { turn: n, receipt };
      const body = bodies.get(n);
      if (read.has(n) && body && body.parentNode && body.parentNode.open) show(n);
    },
  };
}
