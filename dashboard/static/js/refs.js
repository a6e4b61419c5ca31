// The ref registry of a session (tiers, action tags, turn marks; retain and
// release) and its artifacts (content JSON and revision).

import { describe, gql } from './api.js';
import { badge, confirmDialog, empty, h, num, replace, when } from './dom.js';
import { jsonView, toClipboard } from './json.js';
import { mayWrite } from './viewer.js';

/** refFields is what the ref registry table shows of each ref. */
export const refFields = `id ref entityType entityID label action detailLevel fullTurn turnCreated turnLastReferenced turnPromoted sourceStep activeReason enrichTable`;
/** artifactFields is what the artifacts panel shows of each artifact. */
export const artifactFields = 'id entityType label content status revision createdTurn promotedTurn sourceStep updatedAt ref { ref }';
const moreRefs = `query MoreRefs($id: ID!, $after: Cursor) {
  session(id: $id) { refs(first: 100, after: $after, orderBy: [{field: CREATED_AT}]) { pageInfo { hasNextPage endCursor } edges { node { ${refFields} } } } }
}`;
const retain = `mutation RetainRef($id: ID!, $ref: String!, $reason: String!) { retainRef(input: {sessionID: $id, ref: $ref, reason: $reason}) { ref { ref activeReason } } }`;
const release = `mutation ReleaseRef($id: ID!, $ref: String!) { releaseRef(input: {sessionID: $id, ref: $ref}) { ref { ref activeReason } } }`;

function section(id, title, ...body) {
  return h('section', { class: 'card', id: `section-${id}`, tabindex: '-1', 'aria-labelledby': `heading-${id}` },
    h('h2', { id: `heading-${id}` }, title), ...body);
}

function filterSelect(id, label, onchange) {
  const el = h('select', { id, onchange }, h('option', { value: '' }, 'all'));
  return { el, field: h('div', { class: 'field inline' }, h('label', { for: id }, label), el) };
}

/** actionTag shows a ref's action; the :user suffix marks a change made in the frontend. */
function actionTag(action) {
  const [base, who] = action.split(':');
  return h('span', { class: `tag tag-${base}`, title: who === 'user' ? 'changed by the user in the frontend' : null },
    base, who ? h('span', { class: 'tag-user' }, `:${who}`) : null);
}

/**
 * refsPanel is the ref registry table, filterable by type and action; say
 * shows its notices (the session view's own, see noticeScope).
 */
export function refsPanel(sessionID, say) {
  let refs = [];
  let more = null; // pageInfo of the last page loaded
  let total = 0;
  let tiers = { active: new Set(), generated: new Set(), retained: new Set() };
  let writable = true;
  let changed = () => {};

  const type = filterSelect('ref-type', 'Type', () => draw());
  const action = filterSelect('ref-action', 'Action', () => draw());
  const counts = h('p', { class: 'hint', id: 'refs-count' });
  const body = h('div', { class: 'table-wrap', id: 'refs' });
  const moreButton = h('button', { type: 'button', class: 'secondary', hidden: true, onclick: loadMore }, 'Show 100 more refs');
  const el = section('refs', 'Refs',
    h('div', { class: 'panel-bar' }, type.field, action.field, counts),
    body, moreButton);

  function options(select, values) {
    const keep = select.value;
    replace(select, h('option', { value: '' }, 'all'), [...values].sort().map((v) => h('option', { value: v, selected: v === keep }, v)));
    if (keep && !values.has(keep)) select.value = '';
  }

  function tierSets(active) {
    return {
      active: new Set(active.active.map((r) => r.ref)),
      generated: new Set(active.generated.map((r) => r.ref)),
      retained: new Set(active.retained.map((r) => r.ref)),
    };
  }

  function show(conn, active, status) {
    refs = conn.edges.map((e) => e.node);
    more = conn.pageInfo;
    total = conn.totalCount;
    writable = status === 'ACTIVE';
    tiers = tierSets(active);
    draw();
  }

  // patch applies what live events changed: the refs they named (a new one
  // goes at the end when every ref is loaded, else it waits for "Show
  // more"), the total, the tiers and the session's status, each when given.
  function patch({ nodes = [], count = null, active = null, status = null }) {
    if (!more) return; // not shown yet: the first show has it all
    for (const r of nodes) {
      const i = refs.findIndex((x) => x.id === r.id);
      if (i >= 0) refs[i] = r;
      else if (!more.hasNextPage) refs.push(r);
    }
    if (count !== null) total = count;
    if (active) tiers = tierSets(active);
    if (status) writable = status === 'ACTIVE';
    draw();
  }

  async function loadMore() {
    moreButton.disabled = true;
    try {
      const data = await gql(moreRefs, { id: sessionID, after: more.endCursor });
      const conn = data.session.refs;
      refs = refs.concat(conn.edges.map((e) => e.node));
      more = conn.pageInfo;
      draw();
    } catch (err) {
      say(`Could not load more refs: ${describe(err)}`, 'error');
    } finally {
      moreButton.disabled = false;
    }
  }

  function draw() {
    options(type.el, new Set(refs.map((r) => r.entityType)));
    options(action.el, new Set(refs.map((r) => r.action)));
    const shown = refs.filter((r) => (!type.el.value || r.entityType === type.el.value) && (!action.el.value || r.action === action.el.value));
    counts.textContent = shown.length === refs.length
      ? `${num(refs.length)} of ${num(total)} refs`
      : `${num(shown.length)} shown, ${num(refs.length)} loaded of ${num(total)} refs`;
    moreButton.hidden = !more.hasNextPage;
    if (refs.length === 0) { replace(body, empty('No refs yet: the runtime has not recorded any entity.')); return; }
    if (shown.length === 0) { replace(body, empty('No ref matches these filters.')); return; }
    const focusRef = document.activeElement?.dataset?.focusRef;
    replace(body, h('table', { class: 'refs' },
      h('thead', {}, h('tr', {}, ['Ref', 'Type', 'Label', 'Tier', 'Action', 'Detail', 'Turns', mayWrite() ? 'Retain or release' : null]
        .filter((c) => c !== null).map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, shown.map(row))));
    if (focusRef) body.querySelector(`[data-focus-ref="${CSS.escape(focusRef)}"]`)?.focus();
  }

  function tierCell(r) {
    const cells = [];
    if (tiers.generated.has(r.ref)) cells.push(badge('generated'));
    if (tiers.active.has(r.ref)) cells.push(badge('active'));
    if (tiers.retained.has(r.ref)) cells.push(badge('retained'));
    if (cells.length === 0) cells.push(h('span', { class: 'hint' }, 'out of context'));
    if (r.activeReason) cells.push(h('span', { class: 'reason' }, ` kept: ${r.activeReason}`));
    return cells;
  }

  function row(r) {
    const marks = [`T${r.turnCreated} created`, `T${r.turnLastReferenced} last`];
    if (r.turnPromoted) marks.push(`T${r.turnPromoted} saved`);
    const level = r.detailLevel ? r.detailLevel.toLowerCase() : '';
    let detail = level || '—';
    if (r.fullTurn) detail = level === 'full' ? `full T${r.fullTurn}` : `${level || 'read'} (full T${r.fullTurn})`;
    // Retain and release only for a key that may write (not a READER).
    const act = !mayWrite() ? null : r.activeReason
      ? h('button', { type: 'button', class: 'small secondary act', dataset: { focusRef: `release-${r.ref}` }, disabled: !writable, onclick: () => doRelease(r) }, 'Release')
      : h('button', { type: 'button', class: 'small secondary act', dataset: { focusRef: `retain-${r.ref}` }, disabled: !writable, onclick: () => doRetain(r) }, 'Retain…');
    return h('tr', { dataset: { ref: r.ref } },
      h('td', {}, h('code', {}, r.ref), r.entityID ? h('div', { class: 'uuid' },
        h('code', { class: 'hint', dataset: { uuid: r.entityID } }, r.entityID), ' ', copyButton(r.entityID, `${r.ref}'s UUID`, say)) : null),
      h('td', {}, r.entityType),
      h('td', {}, r.label || h('span', { class: 'hint' }, r.enrichTable ? 'waiting for its label' : '—')),
      h('td', { class: 'tier' }, tierCell(r)),
      h('td', {}, actionTag(r.action)),
      h('td', {}, detail),
      h('td', { class: 'marks' }, marks.join(' · ')),
      act ? h('td', {}, act) : null);
  }

  async function doRetain(r) {
    const reason = await confirmDialog({
      title: `Retain ${r.ref}`,
      body: `Keep ${r.ref} (${r.label || r.entityType}) in context past the turn window. Understand shows the reason.`,
      reasonLabel: 'Reason', confirmLabel: 'Retain',
    });
    if (!reason) return;
    try {
      await gql(retain, { id: sessionID, ref: r.ref, reason });
      say(`${r.ref} is retained: ${reason}.`, 'success');
      changed(r.ref);
    } catch (err) {
      say(`Could not retain ${r.ref}: ${describe(err)}`, 'error');
    }
  }

  async function doRelease(r) {
    try {
      await gql(release, { id: sessionID, ref: r.ref });
      say(`${r.ref} is released: it leaves context once it is out of the turn window.`, 'success');
      changed(r.ref);
    } catch (err) {
      say(`Could not release ${r.ref}: ${describe(err)}`, 'error');
    }
  }

  /** onChange sets what happens after this panel retained or released a ref (given its name). */
  return { el, show, patch, onChange: (f) => { changed = f; } };
}

/** artifactsPanel lists generated content with its JSON and revision; say shows its notices. */
export function artifactsPanel(say) {
  const body = h('div', { id: 'artifacts' });
  const el = section('artifacts', 'Artifacts', body);
  const open = new Set();
  const folds = new Map(); // artifact id → its JSON tree's folds

  let items = [];
  let total = 0;

  function show(conn) {
    items = conn.edges.map((e) => e.node);
    total = conn.totalCount;
    draw();
  }

  // patch applies the artifacts live events named: changed ones in place,
  // new ones at the end while the panel holds them all.
  function patch(nodes, count) {
    for (const a of nodes) {
      const i = items.findIndex((x) => x.id === a.id);
      if (i >= 0) items[i] = a;
      else if (items.length >= total) items.push(a);
    }
    total = count;
    draw();
  }

  function draw() {
    if (items.length === 0) { replace(body, empty('No artifacts: nothing was generated in this session.')); return; }
    replace(body,
      total > items.length ? h('p', { class: 'hint' }, `The first ${num(items.length)} of ${num(total)} artifacts.`) : null,
      items.map((a) => {
        const details = h('details', { open: open.has(a.id), ontoggle: () => (details.open ? open.add(a.id) : open.delete(a.id)) },
          h('summary', {}, 'Content JSON'),
          jsonView(a.content, `${a.ref.ref}'s content`, say, folds.get(a.id) || folds.set(a.id, new Map()).get(a.id)));
        return h('article', { class: 'artifact', dataset: { ref: a.ref.ref } },
          h('h3', {}, h('code', {}, a.ref.ref), ' ', a.label, ' ', badge(a.status)),
          h('p', { class: 'hint' },
            `${a.entityType} · revision ${a.revision} · created T${a.createdTurn}`,
            a.promotedTurn ? ` · saved T${a.promotedTurn}` : '',
            a.sourceStep !== null && a.sourceStep !== undefined ? ` · step ${a.sourceStep}` : '',
            ' · updated ', when(a.updatedAt)),
          details);
      }));
  }

  return { el, show, patch };
}

/** copyButton copies text to the clipboard and says so with say. */
function copyButton(text, what, say) {
  return h('button', {
    type: 'button', class: 'small secondary copy', 'aria-label': `Copy ${what}`, dataset: { copy: text },
    onclick: async () => {
      await toClipboard(text);
      say(`Copied ${what}: ${text}`, 'success');
    },
  }, 'Copy');
}
