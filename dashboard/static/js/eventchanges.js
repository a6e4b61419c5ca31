// What a session's event changed on its page, from the event's kind and
// payload: the session view applies each live event by fetching only what
// the event names (the turn, the refs, the receipt), not the whole session.

import { artifactFields, refFields } from './refs.js';
import { turnFields } from './timeline.js';
import { receiptHeadFields } from './receipts.js';

// patchPage bounds each list the patch query reads; events that name more
// (a long replay after the page was away) read the whole session instead.
const patchPage = 100;

/** headKeys are the fields of the session's header that events change. */
export const headKeys = ['status', 'currentTurn', 'tokenCount', 'lastActiveAt', 'expiresAt', 'expiredAt', 'focus'];
/** headFields asks for headKeys. */
export const headFields = headKeys.map((k) => (k === 'focus' ? 'focus { type id }' : k)).join(' ');

// rules says, for each kind of internal/eventkind/kinds.txt (except the
// system's, which no session has), what its event changed, reading the
// payload keys that file lists for it; dashboard/eventchanges_test.go holds
// this table to that file, one line a kind. Every event changes the header
// (last active, expiry, tokens), so that is not said here.
const rules = {
  'session.opened': () => {},
  'session.updated': () => {},
  'session.expired': () => {},
  'session.deleted': (p, c) => { c.gone = true; },
  'turn.began': (p, c) => { c.turn(p.turn); c.tiers = true; },
  'turn.updated': (p, c) => { c.turn(p.turn); },
  'turn.ended': (p, c) => { c.turn(p.turn); c.trace(p.turn); c.tiers = true; if (p.clearedArtifacts) c.allArtifacts = true; },
  'turn.failed': (p, c) => { c.turn(p.turn); c.trace(p.turn); c.tiers = true; },
  'turn.items_recorded': (p, c) => { c.turn(p.turn); c.trace(p.turn); },
  'conversation.reset': (p, c) => { c.all = true; },
  'refs.read': (p, c) => { c.refChanges(p.changes); },
  'refs.updated': (p, c) => { c.refChanges(p.changes); },
  'refs.deleted': (p, c) => { c.refChanges(p.changes); },
  'refs.mentioned': (p, c) => { c.refChanges(p.changes); },
  'refs.enriched': (p, c) => { c.refChanges(p.changes); },
  'ref.user_action': (p, c) => { c.refChanges(p.changes); },
  'ref.created': (p, c) => { c.refChanges(p.changes); },
  'ref.promoted': (p, c) => { c.refChanges(p.changes); c.allArtifacts = true; },
  'ref.retained': (p, c) => { c.ref(p.ref); },
  'ref.released': (p, c) => { c.ref(p.ref); },
  'artifact.generated': (p, c) => { c.refChanges(p.changes); c.artifactsOf(p.changes); },
  'artifact.revised': (p, c) => { c.ref(p.ref); c.refChanges(p.changes); c.artifact(p.ref); },
  'artifact.cleared': (p, c) => { c.ref(p.ref); c.refChanges(p.changes); c.artifact(p.ref); },
  'step.recorded': (p, c) => { c.turn(p.turn); c.refNames(p.refs); },
  'context.recorded': (p, c) => { c.receipt(p.receipt); c.trace(p.turn); },
  'model.call_recorded': (p, c) => { c.turn(p.turn); c.trace(p.turn); },
  'receipts.texts_cleared': (p, c) => { c.textsCleared = true; },
  'session.imported': (p, c) => { c.all = true; },
};

/**
 * Changes gathers what a run of events changed, until the view fetches it:
 * events that come while a fetch is out add to the next one.
 */
export class Changes {
  constructor() { this.clear(); }

  clear() {
    this.any = false;
    this.all = false; // only a load of the whole session shows it
    this.gone = false;
    this.turns = new Set();
    this.traces = new Set(); // turns whose items, builds or model calls changed: an open trace reads them again
    this.refs = new Set();
    this.tiers = false;
    this.receipts = new Set();
    this.artifacts = new Set(); // by ref
    this.allArtifacts = false;
    this.textsCleared = false;
  }

  /** add takes an event in; a kind the table does not know reloads the session. */
  add(ev) {
    this.any = true;
    const rule = rules[ev.kind];
    if (rule) rule(ev.payload || {}, this);
    else this.all = true;
    if (Math.max(this.turns.size, this.refs.size, this.receipts.size, this.artifacts.size) > patchPage) this.all = true;
  }

  turn(n) { if (Number.isInteger(n)) this.turns.add(n); }
  trace(n) { if (Number.isInteger(n)) this.traces.add(n); }
  /** refChanged notes a ref the view itself changed, with no event yet. */
  refChanged(name) { this.any = true; this.ref(name); }
  ref(name) { if (typeof name === 'string' && name) { this.refs.add(name); this.tiers = true; } }
  refNames(names) { for (const r of names || []) this.ref(r); }
  refChanges(changes) { for (const ch of changes || []) this.ref(ch.ref); }
  artifact(ref) { if (typeof ref === 'string' && ref) this.artifacts.add(ref); }
  artifactsOf(changes) { for (const ch of changes || []) this.artifact(ch.ref); }
  receipt(id) { if (typeof id === 'string' && id) this.receipts.add(id); }

  /** take returns what was gathered and starts afresh. */
  take() {
    const taken = Object.assign(new Changes(), this);
    this.clear();
    return taken;
  }

  /**
   * request is the one query that reads the header and what the events
   * named, with its variables: only the parts they changed are asked for.
   */
  request(id) {
    const vars = ['$id: ID!'];
    const parts = [`id ${headFields}`];
    const variables = { id };
    if (this.turns.size) {
      vars.push('$turns: [Int!]');
      variables.turns = [...this.turns];
      parts.push(`turns(first: ${patchPage}, where: {numberIn: $turns}, orderBy: [{field: NUMBER}]) { edges { cursor node { ${turnFields} } } }`,
        'turnCount: turns(first: 0) { totalCount }');
    }
    if (this.refs.size) {
      vars.push('$refs: [String!]');
      variables.refs = [...this.refs];
      parts.push(`refs(first: ${patchPage}, where: {refIn: $refs}, orderBy: [{field: CREATED_AT}]) { edges { node { ${refFields} } } }`,
        'refCount: refs(first: 0) { totalCount }');
    }
    if (this.tiers) parts.push('activeEntities(turnsWindow: 2) { active { ref } generated { ref } retained { ref } }');
    if (this.receipts.size) {
      vars.push('$receipts: [ID!]');
      variables.receipts = [...this.receipts];
      parts.push(`contextReceipts(first: ${patchPage}, where: {idIn: $receipts}, orderBy: [{field: TURN}, {field: CREATED_AT}]) { edges { node { ${receiptHeadFields} } } }`,
        'receiptCount: contextReceipts(first: 0) { totalCount }');
    }
    if (this.allArtifacts) {
      parts.push(`artifacts(first: ${patchPage}, orderBy: [{field: CREATED_AT}]) { totalCount edges { node { ${artifactFields} } } }`);
    } else if (this.artifacts.size) {
      vars.push('$artifacts: [String!]');
      variables.artifacts = [...this.artifacts];
      parts.push(`namedArtifacts: artifacts(first: ${patchPage}, where: {hasRefWith: [{refIn: $artifacts}]}, orderBy: [{field: CREATED_AT}]) { edges { node { ${artifactFields} } } }`,
        'artifactCount: artifacts(first: 0) { totalCount }');
    }
    return { query: `query SessionPatch(${vars.join(', ')}) { session(id: $id) { ${parts.join(' ')} } }`, variables };
  }
}
