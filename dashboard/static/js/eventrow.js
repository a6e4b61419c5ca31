// One event of a session as the page shows it, a row of the event log or
// of a turn's trace: its sequence, time, kind and payload in one line,
// unfolding to the payload's JSON tree.

import { h, when } from './dom.js';
import { jsonView } from './json.js';

/** eventFields is what the page reads of each event: turn puts a live one into its turn's trace. */
export const eventFields = 'sequence kind turn payload createdAt';

/** payloadText says what an event carries in one line: "read recipe_1, read recipe_2 · table: recipes". */
function payloadText(p) {
  return Object.entries(p || {}).map(([k, v]) => {
    if (k === 'changes' && Array.isArray(v)) return v.map((c) => `${c.action || ''} ${c.ref || ''}`.trim()).join(', ');
    return `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`;
  }).join(' · ');
}

// payloadCell shows an event's payload in one line, unfolding to its JSON
// tree, built on first unfolding: a burst of events costs one line each.
function payloadCell(ev, say) {
  const text = payloadText(ev.payload);
  if (!text) return h('span', { class: 'hint' }, '—');
  const details = h('details', {
    dataset: { key: `payload-${ev.sequence}` }, // a trace redrawn by a live event reopens it (keepOpen)
    ontoggle: () => {
      if (details.open && !details.querySelector('.json-view')) details.append(jsonView(ev.payload, `event ${ev.sequence}'s payload`, say));
    },
  }, h('summary', {}, text.length > 160 ? `${text.slice(0, 160)}…` : text));
  return details;
}

/** eventRow is an event's row: #, when, kind, payload; say shows the JSON tree's notices. */
export function eventRow(ev, say) {
  return h('tr', { dataset: { sequence: ev.sequence, kind: ev.kind } },
    h('td', { class: 'num' }, ev.sequence),
    h('td', {}, when(ev.createdAt)),
    h('td', {}, h('code', {}, ev.kind)),
    h('td', { class: 'payload' }, payloadCell(ev, say)));
}
