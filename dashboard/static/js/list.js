// The sessions list: search, filters, sorting, cursor pages with totals,
// bulk expiry, and live refresh from the sessionsChanged feed. What the list
// shows (filters, sort, page) lives in the hash's query, #/?q=…&status=…, so
// that a reload, a shared link and the back button show the same list.

import { describe, gql, subscribe } from './api.js';
import { badge, coalesce, confirmDialog, empty, errorBox, h, loading, noticeScope, num, replace, span, when } from './dom.js';
import { kindWords, listKinds } from './eventkinds.js';
import { factSearchPanel } from './facts.js';
import { userHref } from './users.js';
import { mayAdminister, viewer } from './viewer.js';

const pageSize = 20;
// Expiring more than this many sessions asks for the count typed back.
const typeCountAbove = 100;
// The live feed is said to be behind when its newest change is older than this (ms).
const lagShown = 5000;
const listHashKey = 'sessiongraph.listHash';
const uuidShape = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const sessionsQuery = `query Sessions($first: Int, $after: Cursor, $where: SessionWhereInput, $orderBy: [SessionOrder!]) {
  sessions(first: $first, after: $after, where: $where, orderBy: $orderBy) {
    totalCount
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    edges { node { id tenant externalKey userID domain status currentTurn tokenCount createdAt updatedAt lastActiveAt expiresAt } }
  }
}`;

// The page before a cursor, read backwards: "← Previous" from a page that
// was reloaded or shared, whose earlier cursors are not known.
const pageQuery = `query SessionsBefore($last: Int, $before: Cursor, $where: SessionWhereInput, $orderBy: [SessionOrder!]) {
  sessions(last: $last, before: $before, where: $where, orderBy: $orderBy) {
    totalCount
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    edges { node { id tenant externalKey userID domain status currentTurn tokenCount createdAt updatedAt lastActiveAt expiresAt } }
  }
}`;

// How many match, and the newest of them: bulk expiry acts on no session created after it.
const newestQuery = `query Newest($where: SessionWhereInput) {
  sessions(first: 1, where: $where, orderBy: [{field: CREATED_AT, direction: DESC}]) { totalCount edges { node { createdAt } } }
}`;
const expireMany = `mutation ExpireSessions($where: SessionWhereInput!) { expireSessions(input: {where: $where}) { count } }`;
const feed = `subscription SessionsChanged($after: String, $kinds: [String!]) { sessionsChanged(after: $after, kinds: $kinds) { cursor kind sessionID createdAt } }`;
// Where the feed stands now: read before the list, so the feed starts there.
const cursorQuery = `query FeedCursor { sessionsChangedCursor }`;

const idleChoices = [
  ['', 'any'], ['300', 'over 5 min'], ['3600', 'over 1 hour'], ['86400', 'over 1 day'], ['604800', 'over 7 days'],
];
const sortChoices = [
  ['LAST_ACTIVE_AT', 'Last active'], ['CREATED_AT', 'Created'], ['CURRENT_TURN', 'Turn count'], ['TOKEN_COUNT', 'Token count'],
];
const dirChoices = [['DESC', 'Descending'], ['ASC', 'Ascending']];
// Columns a phone leaves out, so that status and turns fit beside the key
// (the session's page shows them all).
const wideOnly = ['User', 'Domain', 'Created', 'Expires'];
const statusChoices = [['', 'any'], ['ACTIVE', 'active'], ['EXPIRED', 'expired']];
// Whether a session had a failed turn: failTurn, or a model call that returned an error.
const failedChoices = [['', 'any'], ['yes', 'with a failed turn'], ['no', 'without']];

// The list's state as the hash's query says it; a value left out is its default.
const defaults = { q: '', tenant: '', status: '', domain: '', idle: '', failed: '', slowerMs: '', costAbove: '', sort: 'LAST_ACTIVE_AT', dir: 'DESC', page: 1, after: '', before: '' };

/** isListHash: the hash is the sessions list's route (#/ with or without a query). */
export function isListHash(hash) {
  return hash === '' || hash === '#' || hash === '#/' || hash.startsWith('#/?');
}

/** listState reads the list's state from a hash such as #/?q=chat&page=2&after=…. */
export function listState(hash) {
  const query = new URLSearchParams(hash.replace(/^#\/?\??/, ''));
  const state = { ...defaults };
  for (const name of Object.keys(defaults)) if (query.has(name)) state[name] = query.get(name);
  // A hand-edited address with a choice the form does not offer gets the default.
  const offered = { sort: sortChoices, dir: dirChoices, status: statusChoices, idle: idleChoices, failed: failedChoices };
  for (const [name, choices] of Object.entries(offered)) {
    if (!choices.some(([v]) => v === state[name])) state[name] = defaults[name];
  }
  // A bound that is not a number at least 0 is no bound; one past what
  // GraphQL's Int holds is that most (no turn takes longer).
  const ms = Number.parseInt(state.slowerMs, 10);
  state.slowerMs = ms >= 0 ? String(Math.min(ms, 2 ** 31 - 1)) : '';
  const dollarsAbove = Number(state.costAbove);
  if (!(Number.isFinite(dollarsAbove) && dollarsAbove >= 0) || String(state.costAbove).trim() === '') state.costAbove = '';
  state.page = Math.max(1, Number.parseInt(state.page, 10) || 1);
  if (state.page === 1) state.after = state.before = ''; // the first page needs no cursor
  return state;
}

/** listHash is the hash for a state, with only what differs from the defaults. */
export function listHash(state) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(defaults)) {
    if (state[name] !== undefined && String(state[name]) !== String(value)) query.set(name, String(state[name]));
  }
  const text = query.toString();
  return text ? `#/?${text}` : '#/';
}

/** listHref is where "back to the list" goes: the list as it was last shown in this tab. */
export function listHref() {
  return sessionStorage.getItem(listHashKey) || '#/';
}

/** sessionConditions are the filters as SessionWhereInput conditions, all of which must hold. */
function sessionConditions(f) {
  const and = [];
  let q = f.q.trim();
  const quoted = /^".+"$/.test(q);
  if (quoted) q = q.slice(1, -1);
  if (q) {
    // A UUID is a session's id or a record a session references (which
    // sessions read this recipe?); a key (one word with a digit and a
    // separator, such as chat-42) is a session's key or a user, found
    // without reading any message; other text, or anything in quotes, is
    // also looked for in the messages of either side and in the turns'
    // items (a tool's name, its arguments, its output, any message).
    const or = [{ externalKeyContainsFold: q }, { userIDContainsFold: q }];
    if (uuidShape.test(q)) or.push({ id: q }, { hasRefsWith: [{ entityID: q }] });
    else if (quoted || !looksLikeKey(q)) {
      or.push({ hasTurnsWith: [{ or: [{ userMessageContainsFold: q }, { assistantMessageContainsFold: q }, { itemContainsFold: q }] }] });
    }
    and.push({ or });
  }
  // Part of a tenant's name finds it, in any case: "acme" finds "Acme-EU".
  if (f.tenant.trim()) and.push({ tenantContainsFold: f.tenant.trim() });
  if (f.status) and.push({ status: f.status });
  if (f.domain.trim()) and.push({ domain: f.domain.trim() });
  if (f.idle) and.push({ lastActiveAtLT: new Date(Date.now() - Number(f.idle) * 1000).toISOString() });
  if (f.failed) and.push({ hasFailedTurn: f.failed === 'yes' });
  if (f.slowerMs !== '') and.push({ turnSlowerThanMs: Number(f.slowerMs) });
  if (f.costAbove !== '') and.push({ costAbove: Number(f.costAbove) });
  return and;
}

/** filterWords names the applied filters in words, as the expiry dialog states them. */
export function filterWords(f) {
  const words = [];
  if (f.q.trim()) words.push(`the search is “${f.q.trim()}”`);
  if (f.tenant.trim()) words.push(`the tenant's name contains “${f.tenant.trim()}”`);
  if (f.status) words.push(`the status is ${f.status.toLowerCase()}`);
  if (f.domain.trim()) words.push(`the domain is “${f.domain.trim()}”`);
  if (f.idle) words.push(`idle ${idleChoices.find(([v]) => v === f.idle)[1]}`);
  if (f.failed) words.push(f.failed === 'yes' ? 'a turn failed' : 'no turn failed');
  if (f.slowerMs !== '') words.push(`a turn's model calls took over ${num(Number(f.slowerMs))} ms`);
  if (f.costAbove !== '') words.push(`the model calls cost over $${f.costAbove}`);
  return words;
}

/** looksLikeKey: one word with a digit and a separator, as chat-42 or user_7. */
export function looksLikeKey(q) {
  return /^[\w.:@/-]+$/.test(q) && /\d/.test(q) && /[-_.:@/]/.test(q) && !uuidShape.test(q);
}

/** sessionWhere turns the filters into a SessionWhereInput ({} when there are none). */
export function sessionWhere(f) {
  const and = sessionConditions(f);
  return and.length ? { and } : {};
}

function field(id, label, control) {
  control.id = id;
  return h('div', { class: 'field' }, h('label', { for: id }, label), control);
}

function select(name, choices, value) {
  return h('select', { name }, choices.map(([v, text]) => h('option', { value: v, selected: v === value }, text)));
}

/** sessionsList renders the list into root and returns the function that stops it. */
export function sessionsList(root) {
  let f = listState(location.hash);
  let generation = 0;
  let stopped = false;
  let current = null;
  // The list's notices are its own: they leave with it (a session page
  // opened from the list never shows them).
  const notices = noticeScope();
  const notice = notices.notice;
  const changed = new Map(); // session id → kind, for rows changed since the last look
  // The feed replays from a cursor read before the list, so some changes
  // it brings are already in the rows as first shown: a change is news only
  // when it is newer than its row was then (its updatedAt, which every
  // change of a session sets). A row shown later, by a reload another
  // change caused, still counts as it was first shown. Changes that arrive
  // before the first rows wait for them.
  let firstShown = null; // session id → updatedAt as first shown
  let early = [];
  // A change to a row on the page refreshes that row in place; any other
  // (a new session, one that may now belong on this page) is counted and
  // offered as "N changes — refresh": the page stays calm under writes and
  // its pager is never taken away by the feed.
  const dirty = new Set(); // ids of rows on the page to read again
  const pending = new Set(); // ids of changed sessions not on the page
  const noteChange = (ev) => {
    if (!firstShown) { early.push(ev); return; }
    const was = firstShown.get(ev.sessionID);
    if (was && Date.parse(ev.createdAt) <= Date.parse(was)) return; // the page already shows it
    if (current && current.edges.some((e) => e.node.id === ev.sessionID)) {
      changed.set(ev.sessionID, ev.kind);
      dirty.add(ev.sessionID);
      refreshRows();
    } else if (Date.parse(ev.createdAt) >= readAt) {
      // Off the page, a change older than the page's read is already in
      // its count (the feed replays from a cursor read before the list).
      changed.set(ev.sessionID, ev.kind);
      pending.add(ev.sessionID);
      showPending();
    }
  };
  let readAt = 0; // when the page shown was read (this browser's clock)

  const q = h('input', { type: 'search', name: 'q', placeholder: 'chat-42, user-7, words of a message, a session id or a record\'s UUID', autocomplete: 'off' });
  const tenant = h('input', { name: 'tenant', autocomplete: 'off', placeholder: 'part of a name' });
  const domain = h('input', { name: 'domain', autocomplete: 'off' });
  const status = select('status', statusChoices, f.status);
  const idle = select('idle', idleChoices, f.idle);
  const failed = select('failed', failedChoices, f.failed);
  const slowerMs = h('input', { name: 'slowerMs', type: 'number', min: '0', step: '1', inputmode: 'numeric', autocomplete: 'off', placeholder: 'ms' });
  const costAbove = h('input', { name: 'costAbove', type: 'number', min: '0', step: 'any', inputmode: 'decimal', autocomplete: 'off', placeholder: 'US$' });
  const sort = select('sort', sortChoices, f.sort);
  const dir = select('dir', dirChoices, f.dir);

  const form = h('form', { class: 'filters card', role: 'search', 'aria-label': 'Find sessions', onsubmit: (ev) => { ev.preventDefault(); apply(); } },
    field('filter-q', 'Search keys, users, ids, messages or a record UUID', q),
    field('filter-tenant', 'Tenant', tenant),
    field('filter-status', 'Status', status),
    field('filter-idle', 'Idle', idle),
    field('filter-domain', 'Domain', domain),
    field('filter-failed', 'Failed turns', failed),
    field('filter-slower', 'A turn slower than (ms)', slowerMs),
    field('filter-cost', 'Cost above (US$)', costAbove),
    field('filter-sort', 'Sort by', sort),
    field('filter-dir', 'Order', dir),
    h('div', { class: 'field actions' },
      h('button', { type: 'submit', class: 'primary', id: 'search' }, 'Search'),
      h('button', { type: 'button', class: 'secondary', id: 'clear-filters', onclick: reset }, 'Clear')));

  const summary = h('p', { id: 'list-summary', class: 'summary', 'aria-live': 'polite' });
  // Only an ADMIN key may expire sessions: other roles do not see the button
  // rather than see it fail after the click.
  const bulk = mayAdminister() ? h('button', { type: 'button', class: 'danger', id: 'bulk-expire', onclick: bulkExpire }, 'Expire matching…') : null;
  const feedState = h('p', { id: 'feed-state', class: 'hint', 'aria-live': 'polite' });
  const searchHint = h('p', { id: 'search-hint', class: 'hint' });
  const pendingButton = h('button', { type: 'button', class: 'secondary small', id: 'pending-changes', hidden: true, onclick: () => load() });
  const lag = h('span', { id: 'feed-lag', class: 'lag', hidden: true, role: 'status' });
  const table = h('div', { id: 'sessions', class: 'table-wrap' }, loading('sessions'));
  const prev = h('button', { type: 'button', class: 'secondary', id: 'prev-page', onclick: previousPage }, '← Previous');
  const next = h('button', { type: 'button', class: 'secondary', id: 'next-page', onclick: nextPage }, 'Next →');

  replace(root,
    h('div', { class: 'page-head' }, h('h1', {}, 'Sessions'), bulk),
    form,
    h('div', { class: 'list-bar' }, summary, pendingButton, lag, feedState),
    searchHint,
    table,
    h('nav', { class: 'pager', 'aria-label': 'Pages' }, prev, next),
    factSearchPanel().el);
  fill();

  // fill shows the state's filters in the form.
  function fill() {
    q.value = f.q; tenant.value = f.tenant; domain.value = f.domain;
    status.value = f.status; idle.value = f.idle; sort.value = f.sort; dir.value = f.dir;
    failed.value = f.failed; slowerMs.value = f.slowerMs; costAbove.value = f.costAbove;
  }

  // show goes to a state: a new history entry whose hash says it. The
  // hashchange that follows loads it; the same state again just reloads.
  function show(state) {
    const hash = listHash(state);
    if (hash === listHash(listState(location.hash))) { f = listState(hash); load(); return; }
    location.hash = hash;
  }

  // follow takes the state from the hash, after back, forward or a link.
  function follow() {
    if (!isListHash(location.hash)) return;
    f = listState(location.hash);
    fill();
    changed.clear();
    firstShown = null; // a new look: the next rows are what it shows first
    load();
  }

  function formState() {
    return {
      ...defaults, q: q.value, tenant: tenant.value, domain: domain.value, status: status.value, idle: idle.value,
      failed: failed.value, slowerMs: slowerMs.value, costAbove: costAbove.value, sort: sort.value, dir: dir.value,
    };
  }

  function apply() { show(formState()); }

  function reset() { show({ ...defaults }); }

  function nextPage() {
    show({ ...f, page: f.page + 1, after: current.pageInfo.endCursor, before: '' });
  }

  // The page before is read backwards from this page's first row, so a
  // reloaded or shared page needs only its own cursor.
  function previousPage() {
    show({ ...f, page: f.page - 1, after: '', before: f.page - 1 > 1 ? current.pageInfo.startCursor : '' });
  }

  async function load() {
    const mine = ++generation;
    const started = Date.now();
    sessionStorage.setItem(listHashKey, listHash(f));
    table.setAttribute('aria-busy', 'true');
    if (!current) replace(table, loading('sessions'));
    else summary.textContent = 'Refreshing…';
    prev.disabled = next.disabled = true;
    try {
      const common = { where: sessionWhere(f), orderBy: [{ field: f.sort, direction: f.dir }] };
      const data = f.before
        ? await gql(pageQuery, { ...common, last: pageSize, before: f.before })
        : await gql(sessionsQuery, { ...common, first: pageSize, after: f.after || null });
      if (mine !== generation) return;
      current = data.sessions;
      readAt = started;
      pending.clear();
      dirty.clear();
      showPending();
      if (!firstShown) {
        firstShown = new Map(current.edges.map((e) => [e.node.id, e.node.updatedAt]));
        early.forEach(noteChange);
        early = [];
      }
      render();
    } catch (err) {
      if (mine !== generation) return;
      current = null;
      summary.textContent = '';
      replace(table, errorBox(`Could not load sessions: ${describe(err)}`, load));
    } finally {
      if (mine === generation) table.removeAttribute('aria-busy');
    }
  }

  function render() {
    const start = (f.page - 1) * pageSize;
    const rows = current.edges.map((e) => e.node);
    summary.textContent = current.totalCount === 0 ? 'No sessions match.'
      : `${num(start + 1)}–${num(start + rows.length)} of ${num(current.totalCount)} sessions`;
    replace(searchHint, looksLikeKey(f.q.trim())
      ? `“${f.q.trim()}” looks like a key: keys and users only. Put it in quotes to search messages too.` : null);
    prev.disabled = f.page === 1;
    // Read backwards, the page after this one is the page the admin came from.
    next.disabled = f.before ? rows.length === 0 : !current.pageInfo.hasNextPage;
    if (rows.length === 0) {
      replace(table, empty(f.page > 1 ? 'This page is empty now: go back a page.' : 'No session matches these filters.'));
      return;
    }
    const focused = document.activeElement && table.contains(document.activeElement)
      ? document.activeElement.closest('tr')?.dataset.id : null;
    replace(table, h('table', { class: 'sessions' },
      h('caption', { class: 'sr-only' }, 'Sessions'),
      h('thead', {}, h('tr', {}, ['External key', 'Tenant', 'User', 'Domain', 'Status', 'Turns', 'Tokens', 'Last active', 'Created', 'Expires']
        .map((c) => h('th', { scope: 'col', class: ['Turns', 'Tokens'].includes(c) ? 'num' : wideOnly.includes(c) ? 'wide-only' : null }, c)))),
      h('tbody', {}, rows.map(row))));
    if (focused) table.querySelector(`tr[data-id="${CSS.escape(focused)}"] a`)?.focus();
  }

  function row(s) {
    const kind = changed.get(s.id);
    return h('tr', { dataset: { id: s.id, key: s.externalKey }, class: kind ? 'changed' : null },
      h('td', {}, h('a', { href: `#/sessions/${s.id}`, title: `Session ${s.id}` }, s.externalKey),
        kind ? h('span', { class: 'change-tag' }, ` ${kindWords[kind] || kind}`) : null),
      h('td', {}, s.tenant),
      h('td', { class: 'wide-only' }, s.userID ? h('a', { href: userHref(s.userID, s.tenant), title: `Every session of ${s.userID} in ${s.tenant}` }, s.userID) : '—'),
      h('td', { class: 'wide-only' }, s.domain),
      h('td', {}, badge(s.status)),
      h('td', { class: 'num' }, num(s.currentTurn)),
      h('td', { class: 'num' }, num(s.tokenCount)),
      h('td', {}, when(s.lastActiveAt)),
      h('td', { class: 'wide-only' }, when(s.createdAt)),
      h('td', { class: 'wide-only' }, s.status === 'ACTIVE' ? when(s.expiresAt) : '—'));
  }

  async function bulkExpire() {
    // The filters applied to the list, as it shows them: never what is
    // typed in the form but not searched yet. Only active sessions can
    // expire; with no filter this is every active session the key sees.
    // The conditions are read once, so an idle bound is the one counted.
    const applied = sessionConditions(f);
    const matching = { and: [...applied, { status: 'ACTIVE' }] };
    bulk.disabled = true;
    try {
      // The count also fixes a bound: the newest matching session's
      // creation. Sessions opened while the dialog is open are not among
      // those counted, and the expiry leaves them alone.
      const counted = (await gql(newestQuery, { where: matching })).sessions;
      const n = counted.totalCount;
      if (n === 0) { notice('No active session matches the list\'s filters: nothing to expire.'); return; }
      const where = { and: [...matching.and, { createdAtLTE: counted.edges[0].node.createdAt }] };
      const s = n === 1 ? '' : 's';
      const scope = viewer()?.tenant ? `of tenant ${viewer().tenant}` : 'of all tenants';
      const everything = applied.length === 0;
      // Above the threshold the count is typed back, filter or not: a
      // filter can match more than it seems (tenant “e” is in most names).
      const big = n > typeCountAbove;
      const ok = await confirmDialog({
        title: everything ? 'Expire every active session' : 'Expire sessions',
        body: everything
          ? `Expire all ${num(n)} active session${s} ${scope}? No filter is applied. They stay readable until purged; their keys open fresh sessions.`
          : `Expire ${num(n)} active session${s} ${scope} where ${filterWords(f).join(' and ')}? They stay readable until purged; their keys open fresh sessions.`,
        confirmLabel: `Expire ${num(n)}`, danger: true,
        reasonLabel: big ? `Type ${n} to confirm` : '', expect: big ? String(n) : '',
      });
      if (!ok) return;
      const done = (await gql(expireMany, { where })).expireSessions.count;
      const short = n - done;
      notice(`Expired ${num(done)} session${done === 1 ? '' : 's'}.` + (short > 0
        ? ` ${num(short)} of the ${num(n)} counted had expired or stopped matching meanwhile.` : ''), 'success');
      load();
    } catch (err) {
      notice(`Bulk expiry failed: ${describe(err)}`, 'error');
    } finally {
      bulk.disabled = false;
    }
  }

  function showPending() {
    pendingButton.hidden = pending.size === 0;
    pendingButton.textContent = `${num(pending.size)} change${pending.size === 1 ? '' : 's'} — refresh`;
  }

  // refreshRows reads the changed rows of the page again and redraws them
  // where they are; a row that no longer matches the filters (or is gone)
  // stays as it was, counted among the changes a refresh would show. Under
  // a burst, one read at a time, the calls in between make one more.
  const refreshRows = coalesce(async () => {
    if (!current || dirty.size === 0) return;
    const ids = [...dirty];
    dirty.clear();
    const mine = generation;
    let found;
    try {
      const where = { and: [...sessionConditions(f), { idIn: ids }] };
      found = (await gql(sessionsQuery, { where, first: ids.length })).sessions.edges.map((e) => e.node);
    } catch {
      ids.forEach((id) => pending.add(id)); // a refresh shows them
      showPending();
      return;
    }
    if (mine !== generation || !current) return; // a load replaced the page meanwhile
    const byID = new Map(found.map((n) => [n.id, n]));
    current = { ...current, edges: current.edges.map((e) => (byID.has(e.node.id) ? { ...e, node: byID.get(e.node.id) } : e)) };
    for (const id of ids) if (!byID.has(id)) pending.add(id);
    showPending();
    render();
  });

  // behind says how far the feed is behind: the age of the newest change it
  // brought, when that is more than a few seconds (a shared database's
  // feed can fall tens of seconds behind).
  let newest = 0;
  function behind() {
    const ms = newest ? Date.now() - newest : 0;
    lag.hidden = ms < lagShown;
    lag.textContent = lag.hidden ? '' : `Live feed ${span(ms)} behind`;
  }

  let stopFeed = () => {};

  // listen starts the feed from the cursor read before the list, so that a
  // change committed between the list's read and the subscription's start
  // is replayed rather than missed.
  async function listen() {
    let after;
    try {
      after = (await gql(cursorQuery)).sessionsChangedCursor;
    } catch {
      after = undefined; // live from now: load() reports what went wrong
    }
    if (stopped) return;
    stopFeed = subscribe(feed, after === undefined ? { kinds: listKinds } : { after, kinds: listKinds }, {
      resume: (data) => data.sessionsChanged?.cursor,
      next: (data) => {
        const ev = data.sessionsChanged;
        if (!ev) return;
        noteChange(ev);
        newest = Math.max(newest, Date.parse(ev.createdAt));
        behind();
        feedState.dataset.seen = String(Number(feedState.dataset.seen || 0) + 1);
        feedState.textContent = `Last change at ${new Date(ev.createdAt).toLocaleTimeString()}: ${kindWords[ev.kind] || ev.kind}.`;
      },
      error: (text) => { feedState.textContent = text; },
    });
    load();
  }

  // The feed brings every change of a row; time alone changes "last active
  // 5 min ago" and "expires in …": redraw the rows now and then.
  const tick = setInterval(() => { if (!document.hidden && current) render(); }, 60000);

  window.addEventListener('hashchange', follow);
  listen();
  return () => { stopped = true; generation++; clearInterval(tick); stopFeed(); notices.clear(); window.removeEventListener('hashchange', follow); };
}
