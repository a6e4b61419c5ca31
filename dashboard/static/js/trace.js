// A turn's trace, under its place in the timeline: the items the agent
// produced (messages, tool calls with their arguments and outputs,
// reasoning) and each node's builds with the model calls they fed. The
// timeline shows a turn's totals (items, calls, latency, cost); the trace
// itself is read when it is opened, and again when a live event changes an
// open one, so that a closed trace costs a live event nothing.

import { describe, gql } from './api.js';
import { badge, empty, errorBox, h, num, replace } from './dom.js';

/** totalsFields is what the timeline reads of each turn's model calls. */
export const totalsFields = 'itemCount modelCallTotals { calls failedCalls inputTokens outputTokens latencyMs cost }';

const callFields = 'id model inputTokens outputTokens latencyMs cost finishReason error';
const traceQuery = `query TurnTrace($id: ID!, $turn: Int!) {
  session(id: $id) {
    id
    turns(first: 1, where: {number: $turn}) { edges { node { id items { position kind role name callID arguments content } } } }
    contextReceipts(first: 100, where: {turn: $turn}, orderBy: [{field: CREATED_AT}]) { edges { node { id node tokenCount budget modelCalls { ${callFields} } } } }
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

// callRows are a build's rows of the calls table: one a model call, or one
// saying the build fed none that was recorded.
function callRows(r) {
  const build = [h('td', {}, h('code', {}, r.node)), h('td', { class: 'num' }, `${num(r.tokenCount)} / ${num(r.budget)}`)];
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

function traceBody(n, items, receipts) {
  const callNames = new Map(items.filter((it) => it.kind === 'FUNCTION_CALL').map((it) => [it.callID, it.name]));
  return [
    h('h3', {}, 'Items'),
    items.length ? h('ol', { class: 'items' }, items.map((it) => itemRow(it, callNames))) : empty('No items.'),
    h('h3', {}, 'Builds and model calls'),
    receipts.length
      // Focusable, so that a keyboard scrolls it where it is wider than a phone.
      ? h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': `Turn ${n}'s builds and model calls` }, h('table', { class: 'calls' },
        h('thead', {}, h('tr', {}, ['Node', 'Tokens / budget', 'Model', 'Tokens in / out', 'Latency', 'Cost', 'Finish'].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, receipts.map(callRows))))
      : empty('No build recorded in this turn.'),
  ];
}

/**
 * turnTraces makes each turn's trace for the timeline: details(turn) is its
 * <details>, read on opening; changed(numbers) says which turns' items or
 * model calls live events changed, re-reading those open.
 */
export function turnTraces(sessionID) {
  const read = new Map(); // turn number → what the trace query read
  const bodies = new Map(); // turn number → the body of its <details> now shown

  const reading = new Map(); // turn number → whether a change came while it was read

  // load reads a turn's trace and shows it; a change that comes while it
  // reads has it read again when done.
  async function load(n) {
    if (reading.has(n)) { reading.set(n, true); return; }
    reading.set(n, false);
    try {
      const s = (await gql(traceQuery, { id: sessionID, turn: n })).session;
      const turn = s && s.turns.edges[0];
      read.set(n, { items: turn ? turn.node.items : [], receipts: s ? s.contextReceipts.edges.map((e) => e.node) : [] });
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
    if (body && got) replace(body, ...traceBody(n, got.items, got.receipts));
  }

  return {
    details(t) {
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
  };
}
