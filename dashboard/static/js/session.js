// One session: its header and actions, then the turn timeline, the ref
// registry, the artifacts, each node's context and the event log, all kept
// live by the sessionEvents subscription while the view is open: each event
// is applied to what is shown, fetching only what it names (eventchanges.js).

import { describe, gql, subscribe } from './api.js';
import { contextPanel } from './context.js';
import { ago, coalesce, confirmDialog, errorBox, h, loading, notice, noticeScope, num, plural, replace, span, time, when } from './dom.js';
import { Changes, headFields, headKeys } from './eventchanges.js';
import { receiptConnection, receiptPage, receiptsPanel } from './receipts.js';
import { artifactFields, artifactsPanel, refFields, refsPanel } from './refs.js';
import { eventFields } from './eventrow.js';
import { eventsPanel, timelinePanel, turnFields, turnPage } from './timeline.js';
import { listHref } from './list.js';
import { userHref } from './users.js';
import { mayAdminister } from './viewer.js';

const sessionQuery = `query Session($id: ID!) {
  session(id: $id) {
    id tenant externalKey userID domain tokenizer ttlSeconds createdAt ${headFields}
    turns(last: ${turnPage}, orderBy: [{field: NUMBER}]) { totalCount pageInfo { hasPreviousPage startCursor } edges { cursor node { ${turnFields} } } }
    refs(first: 100, orderBy: [{field: CREATED_AT}]) { totalCount pageInfo { hasNextPage endCursor } edges { node { ${refFields} } } }
    activeEntities(turnsWindow: 2) { active { ref } generated { ref } retained { ref } }
    artifacts(first: 100, orderBy: [{field: CREATED_AT}]) { totalCount edges { node { ${artifactFields} } } }
    events(last: 50, orderBy: [{field: SEQUENCE}]) { totalCount pageInfo { hasPreviousPage } edges { cursor node { ${eventFields} } } }
    contextReceipts(last: ${receiptPage}, orderBy: [{field: TURN}, {field: CREATED_AT}]) { ${receiptConnection} }
  }
}`;

const eventsSub = `subscription SessionEvents($id: ID!, $after: Int) {
  sessionEvents(sessionID: $id, after: $after) { ${eventFields} }
}`;

const cursorQuery = `query SessionCursor($id: ID!) { session(id: $id) { id events(last: 1, orderBy: [{field: SEQUENCE}]) { edges { node { sequence } } } } }`;
const expireOne = `mutation ExpireSession($id: ID!) { expireSession(input: {id: $id}) { session { id status expiredAt } } }`;
const deleteOne = `mutation DeleteSession($id: ID!) { deleteSession(input: {id: $id}) { deletedSessionID } }`;

/** sessionView renders one session into root and returns the function that stops it. */
export function sessionView(root, id) {
  let stopped = false;
  let session = null;
  let stopEvents = () => {};
  const notices = noticeScope();
  const say = notices.notice;

  const head = h('section', { class: 'card session-head', 'aria-labelledby': 'session-title' }, loading('the session'));
  const banner = h('div', { id: 'session-banner', 'aria-live': 'polite' });
  // A turn's trace and "What the model saw" link to each other.
  const timeline = timelinePanel(id, say, { openBuild: (receipt) => receipts.openBuild(receipt), diffBefore: (r) => receipts.diffBefore(r) });
  const refs = refsPanel(id, say);
  const artifacts = artifactsPanel(say);
  const context = contextPanel(id);
  const receipts = receiptsPanel(id, { openTurn: (n, receipt) => timeline.open(n, receipt) });
  const events = eventsPanel(id, say);

  replace(root,
    h('p', { class: 'crumbs' }, h('a', { href: listHref() }, '← All sessions')),
    head,
    banner,
    h('nav', { class: 'section-nav', 'aria-label': 'Session sections' },
      [['refs', 'Refs'], ['context', 'Context'], ['receipts', 'What the model saw'], ['artifacts', 'Artifacts'], ['turns', 'Turns'], ['events', 'Event log']]
        .map(([target, text]) => h('a', { href: `#/sessions/${id}`, onclick: (ev) => { ev.preventDefault(); jump(target); } }, text))),
    refs.el,
    h('div', { class: 'session-grid' },
      h('div', {}, context.el, artifacts.el),
      h('div', {}, timeline.el)),
    receipts.el,
    events.el);

  function jump(target) {
    const el = document.getElementById(`section-${target}`);
    if (!el) return;
    el.scrollIntoView({ block: 'start' });
    el.focus({ preventScroll: true });
  }

  // changes gathers what live events changed since the last sync.
  const changes = new Changes();

  // load reads the whole session: when the view opens, and when an event's
  // change cannot be applied in place (a conversation reset, an import).
  async function load() {
    head.setAttribute('aria-busy', 'true');
    try {
      const data = await gql(sessionQuery, { id });
      if (stopped) return;
      if (!data.session) {
        gone('No session has this id: it was deleted, purged, or belongs to another tenant.');
        return;
      }
      session = data.session;
      render();
    } catch (err) {
      if (stopped) return;
      if (err.code === 'NOT_FOUND' || err.code === 'INVALID_ID') {
        gone(`No session has this id: it was deleted, purged, or belongs to another tenant. (${err.code})`);
        return;
      }
      const text = `Could not load the session: ${describe(err)}`;
      if (!session) replace(head, errorBox(text, reloadAll));
      else replace(banner, errorBox(text, reloadAll));
    } finally {
      head.removeAttribute('aria-busy');
    }
  }

  // sync shows what changed since it last ran: the whole session the first
  // time, else only what the events named, read in one request (Changes.request).
  // Call refresh instead: a burst of events then costs one request in
  // flight and one after it, however many events it brings.
  async function sync() {
    if (!session || changes.all) {
      changes.clear();
      await load();
      return;
    }
    const c = changes.take();
    if (!c.any) return;
    if (c.textsCleared) receipts.textsCleared();
    head.setAttribute('aria-busy', 'true');
    try {
      const { query, variables } = c.request(id);
      const data = await gql(query, variables);
      if (stopped) return;
      if (!data.session) {
        gone('No session has this id: it was deleted, purged, or belongs to another tenant.');
        return;
      }
      apply(data.session);
      if (c.traces.size) timeline.retrace(c.traces);
    } catch (err) {
      if (stopped) return;
      if (err.code === 'NOT_FOUND' || err.code === 'INVALID_ID') {
        gone(`No session has this id: it was deleted, purged, or belongs to another tenant. (${err.code})`);
        return;
      }
      // What this request was to bring is lost with it: the next event, or
      // the admin's retry, reads the whole session.
      changes.all = true;
      replace(banner, errorBox(`Could not follow the session's changes: ${describe(err)}`, reloadAll));
    } finally {
      head.removeAttribute('aria-busy');
    }
  }

  const refresh = coalesce(sync);

  function reloadAll() {
    changes.all = true;
    refresh();
  }

  /** apply shows what Changes.request read: the header always, the rest when asked. */
  function apply(s) {
    const statusChanged = s.status !== session.status;
    for (const f of headKeys) session[f] = s[f];
    renderHead();
    if (s.turns) {
      session.turns.totalCount = s.turnCount.totalCount;
      timeline.patch(s.turns.edges, s.turnCount.totalCount);
    }
    if (s.refs || s.activeEntities || statusChanged) {
      if (s.refCount) session.refs.totalCount = s.refCount.totalCount;
      refs.patch({ nodes: s.refs ? s.refs.edges.map((e) => e.node) : [], count: s.refCount ? s.refCount.totalCount : null, active: s.activeEntities, status: s.status });
    }
    if (s.contextReceipts) receipts.add(s.contextReceipts.edges.map((e) => e.node), s.receiptCount.totalCount);
    if (s.artifacts) {
      session.artifacts = s.artifacts;
      artifacts.show(s.artifacts);
    } else if (s.namedArtifacts) {
      session.artifacts.totalCount = s.artifactCount.totalCount;
      artifacts.patch(s.namedArtifacts.edges.map((e) => e.node), s.artifactCount.totalCount);
    }
  }

  function gone(text) {
    stopped = true;
    stopEvents();
    context.stop();
    session = null;
    document.title = 'Session not found · sessiongraph';
    replace(root, h('p', { class: 'crumbs' }, h('a', { href: listHref() }, '← All sessions')), errorBox(text));
  }

  function render() {
    document.title = `${session.externalKey} · sessiongraph`;
    replace(banner);
    renderHead();
    timeline.show(session.turns);
    refs.show(session.refs, session.activeEntities, session.status);
    artifacts.show(session.artifacts);
    events.show(session.events);
    receipts.show(session.contextReceipts);
    context.live();
  }

  function renderHead() {
    const s = session;
    const expiry = s.status === 'ACTIVE'
      ? h('span', { id: 'session-expiry' }, h('time', { datetime: s.expiresAt, title: time(s.expiresAt) }, `in ${span(new Date(s.expiresAt) - Date.now())}`))
      : h('span', { id: 'session-expiry' }, 'expired ', when(s.expiredAt || s.expiresAt, ago));
    const fact = (label, value, valueId) => h('div', {}, h('dt', {}, label), h('dd', { id: valueId }, value));
    replace(head,
      h('div', { class: 'head-row' },
        h('div', {},
          h('h1', { id: 'session-title' }, s.externalKey, ' ', h('span', { id: 'session-status', class: `status status-${s.status.toLowerCase()}` }, s.status)),
          h('p', { class: 'hint' }, 'Session ', h('code', { id: 'session-id' }, s.id))),
        // Only the actions this key's role may perform (viewer.js).
        mayAdminister() ? h('div', { class: 'actions' },
          h('button', { type: 'button', class: 'secondary', id: 'expire-session', disabled: s.status !== 'ACTIVE', onclick: expire },
            s.status === 'ACTIVE' ? 'Expire' : 'Expired'),
          h('button', { type: 'button', class: 'danger', id: 'delete-session', onclick: remove }, 'Delete…')) : null),
      h('dl', { class: 'facts' },
        fact('Tenant', s.tenant),
        fact('User', s.userID ? h('a', { href: userHref(s.userID, s.tenant), id: 'session-user', title: `Every session of ${s.userID} in ${s.tenant}` }, s.userID) : '—'),
        fact('Domain', s.domain),
        fact('Current turn', num(s.currentTurn), 'session-turn'),
        fact('Tokens', [num(s.tokenCount), ' ', h('span', { class: 'hint' }, s.tokenizer)], 'session-tokens'),
        fact('Created', when(s.createdAt)),
        fact('Last active', when(s.lastActiveAt)),
        fact(s.status === 'ACTIVE' ? 'Expires' : 'Status', expiry),
        s.focus ? fact('Focus', `${s.focus.type}${s.focus.id ? ` ${s.focus.id}` : ''}`) : null));
  }

  async function expire() {
    const ok = await confirmDialog({
      title: 'Expire this session',
      body: `Expire “${session.externalKey}” now? It stays readable until purged, writes to it fail with SESSION_EXPIRED, and its key opens a fresh session.`,
      confirmLabel: 'Expire session', danger: true,
    });
    if (!ok) return;
    // This view's own button: the admin may have gone to another session's page.
    const button = head.querySelector('#expire-session');
    if (button) { button.disabled = true; button.textContent = 'Expiring…'; }
    try {
      const out = (await gql(expireOne, { id })).expireSession.session;
      say(`Session “${session.externalKey}” is ${out.status.toLowerCase()}.`, 'success');
      if (session) { // at once; its event, when it comes, reads the header again
        Object.assign(session, { status: out.status, expiredAt: out.expiredAt });
        renderHead();
        refs.patch({ status: out.status });
      }
    } catch (err) {
      say(`Could not expire the session: ${describe(err)}`, 'error');
      if (session) renderHead();
    }
  }

  async function remove() {
    const s = session;
    const ok = await confirmDialog({
      title: 'Delete this session',
      body: `Delete “${s.externalKey}” with its ${plural(s.turns.totalCount, 'turn')}, ${plural(s.refs.totalCount, 'ref')}, ${plural(s.artifacts.totalCount, 'artifact')} and ${plural(s.events.totalCount, 'event')}? This cannot be undone.`,
      confirmLabel: 'Delete session', danger: true,
    });
    if (!ok) return;
    // This view's own button: the admin may have gone to another session's page.
    const button = head.querySelector('#delete-session');
    if (button) { button.disabled = true; button.textContent = 'Deleting…'; }
    try {
      await gql(deleteOne, { id });
      // Said to the whole page: it is the news the list opens with.
      notice(`Session “${s.externalKey}” was deleted.`, 'success');
      location.hash = listHref();
    } catch (err) {
      say(`Could not delete the session: ${describe(err)}`, 'error');
      if (session) renderHead();
    }
  }

  // follow subscribes from the session's newest event as read before the
  // first load, so that nothing committed in between is missed; the log
  // drops what it has already seen, and a reconnect resumes from the last
  // event received.
  async function follow() {
    let after = 0;
    try {
      const edges = (await gql(cursorQuery, { id })).session?.events.edges || [];
      if (edges.length) after = edges[0].node.sequence;
    } catch (err) {
      if (err.code === 'NOT_FOUND' || err.code === 'INVALID_ID') { refresh(); return; } // load() says it is gone
      // Otherwise the feed starts from the session's first event; the log drops duplicates.
    }
    if (stopped) return;
    stopEvents = subscribe(eventsSub, { id, after }, {
      resume: (data) => data.sessionEvents?.sequence,
      next: (data) => {
        const ev = data.sessionEvents;
        if (!ev || stopped) return;
        if (events.add(ev) && session) session.events.totalCount++;
        timeline.event(ev);
        changes.add(ev);
        if (changes.gone) {
          gone('This session was deleted while you were looking at it.');
          return;
        }
        refresh();
      },
      error: (text) => { if (!stopped) replace(banner, errorBox(text)); },
    });
    refresh();
  }

  // The panel's own retain or release shows at once; its event, when it
  // comes, reads the same ref again.
  refs.onChange((ref) => {
    changes.refChanged(ref);
    refresh();
  });
  follow();
  return () => {
    stopped = true;
    stopEvents();
    context.stop();
    notices.clear();
  };
}
