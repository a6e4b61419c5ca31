// Small DOM and formatting helpers: the dashboard builds its views with h()
// instead of a framework, so it runs with no build step.

/**
 * h builds an element: h('button', {class: 'x', onclick: f}, 'Label', child).
 * Attributes starting with "on" become listeners; null, false and undefined
 * children and attributes are left out.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      el.addEventListener(name.slice(2), value);
    } else if (name === 'dataset') {
      Object.assign(el.dataset, value);
    } else if (name === 'style') {
      // Through the CSSOM: the page's Content-Security-Policy (style-src
      // 'self') refuses a style attribute, not a style set from script.
      el.style.cssText = value;
    } else if (name in el && typeof value !== 'string') {
      el[name] = value;
    } else {
      el.setAttribute(name, value === true ? '' : value);
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
}

/** replace empties an element and fills it with children. */
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** loading is the placeholder a panel shows while its data is on the way. */
export function loading(what) {
  return h('p', { class: 'loading', role: 'status' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), `Loading ${what}…`);
}

/** errorBox shows a failure in words, with a retry button when given one. */
export function errorBox(message, retry) {
  return h('div', { class: 'error', role: 'alert' },
    h('p', {}, message),
    retry ? h('button', { type: 'button', onclick: retry }, 'Try again') : null);
}

/** empty is what a panel says when there is nothing to show. */
export function empty(text) {
  return h('p', { class: 'empty' }, text);
}

const numbers = new Intl.NumberFormat('en');

/** num formats a count: 12,345. */
export function num(n) {
  return n === null || n === undefined ? '—' : numbers.format(n);
}

/** time formats an instant for a title or a table cell. */
export function time(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  return d.toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'medium' });
}

/** span says how long a number of milliseconds is, in one or two units. */
export function span(ms) {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const hrs = Math.floor(m / 60);
  if (hrs < 48) return m % 60 ? `${hrs} h ${m % 60} min` : `${hrs} h`;
  return `${Math.floor(hrs / 24)} d`;
}

/** ago says how long ago an instant was: "5 min ago". */
export function ago(iso) {
  if (!iso) return '—';
  const ms = Date.now() - new Date(iso).getTime();
  return ms < 0 ? `in ${span(ms)}` : `${span(ms)} ago`;
}

/** when is an instant as a <time> with the relative text and the exact time as its title. */
export function when(iso, relative = ago) {
  if (!iso) return h('span', {}, '—');
  return h('time', { datetime: iso, title: time(iso) }, relative(iso));
}

/** badge is a small coloured label, such as a status or a tier. */
export function badge(text, kind = text.toLowerCase()) {
  return h('span', { class: `badge badge-${kind.replace(/[^a-z0-9]+/g, '-')}` }, text);
}

/**
 * confirmDialog asks before an action, in a modal <dialog> (keyboard
 * friendly: Escape cancels, focus starts on Cancel). With a reasonLabel it
 * also asks for a text, and with expect that text must be exactly expect. It
 * resolves to false when cancelled, else to true or to the text given.
 */
export function confirmDialog({ title, body, confirmLabel, danger = false, reasonLabel = '', expect = '' }) {
  return new Promise((resolve) => {
    const reason = reasonLabel ? h('input', { id: 'dialog-reason', name: 'reason', required: true, autocomplete: 'off' }) : null;
    const cancel = h('button', { type: 'button', class: 'secondary', value: 'cancel' }, 'Cancel');
    const form = h('form', { method: 'dialog' },
      h('h2', { id: 'dialog-title' }, title),
      h('p', { id: 'dialog-body' }, body),
      reason ? h('p', {}, h('label', { for: 'dialog-reason' }, reasonLabel), reason) : null,
      h('div', { class: 'dialog-actions' },
        cancel,
        h('button', { type: 'submit', class: danger ? 'danger' : 'primary', id: 'dialog-confirm', value: 'ok' }, confirmLabel)));
    const dialog = h('dialog', { 'aria-labelledby': 'dialog-title', 'aria-describedby': 'dialog-body' }, form);
    let answer = false;
    cancel.addEventListener('click', () => dialog.close());
    form.addEventListener('submit', (ev) => {
      // With expect, the text must be exactly it (such as a count typed back).
      if (reason && (!reason.value.trim() || (expect && reason.value.trim() !== expect))) { ev.preventDefault(); reason.focus(); return; }
      answer = reason ? reason.value.trim() : true;
    });
    dialog.addEventListener('close', () => { dialog.remove(); resolve(answer); });
    document.body.append(dialog);
    dialog.showModal();
    (reason || cancel).focus();
  });
}

/**
 * notice shows a short message in the page's live region and returns it.
 * A view says what concerns only itself through its noticeScope instead.
 */
export function notice(text, kind = 'info') {
  const region = document.getElementById('notices');
  if (!region) return null;
  const item = h('p', { class: `notice notice-${kind}` }, text,
    h('button', { type: 'button', class: 'link', 'aria-label': 'Dismiss', onclick: () => item.remove() }, '×'));
  region.append(item);
  setTimeout(() => item.remove(), kind === 'error' ? 15000 : 6000);
  return item;
}

/**
 * noticeScope gives a view notices of its own: clear, when the view is
 * left, takes them away, and drops any raised after (a slow request that
 * answers once the admin is on another page), so that a message about one
 * session never shows on another's page.
 */
export function noticeScope() {
  const shown = new Set();
  let cleared = false;
  return {
    notice(text, kind = 'info') {
      if (cleared) return;
      const item = notice(text, kind);
      if (item) shown.add(item);
    },
    clear() {
      cleared = true;
      for (const item of shown) item.remove();
      shown.clear();
    },
  };
}

/**
 * coalesce runs the async f at most once at a time: the calls that come
 * while it runs make one more run after it, however many they are. A steady
 * stream of calls cannot postpone f, as it would a debounce: a busy feed still
 * sees every run's result as soon as it is there.
 */
export function coalesce(f) {
  let running = null;
  let again = false;
  const run = () => {
    if (running) { again = true; return running; }
    running = (async () => {
      try {
        await f();
      } finally {
        running = null;
        if (again) { again = false; run(); }
      }
    })();
    return running;
  };
  return run;
}

/** plural says a count with its noun: "1 turn", "4 turns". */
export function plural(n, noun) {
  return `${num(n)} ${noun}${n === 1 ? '' : 's'}`;
}

/**
 * keepOpen replaces an element's children like replace, and reopens the
 * <details data-key> that were open, so that a live refresh does not fold
 * what the admin unfolded.
 */
export function keepOpen(el, ...children) {
  const open = new Set([...el.querySelectorAll('details[open][data-key]')].map((d) => d.dataset.key));
  replace(el, ...children);
  for (const d of el.querySelectorAll('details[data-key]')) if (open.has(d.dataset.key)) d.open = true;
  return el;
}

/**
 * focusHref is the address of a session's page with one thing in focus: a
 * turn ({turn: N}), a build ({build: id}) or a diff ({diff: 'from,to'}).
 * The others go; the rest (node, fact) stays.
 */
export function focusHref(sessionID, focus) {
  const params = new URLSearchParams(location.hash.split('?')[1] || '');
  for (const k of ['turn', 'build', 'diff']) params.delete(k);
  for (const [k, v] of Object.entries(focus)) params.set(k, String(v));
  const query = params.toString();
  return `#/sessions/${sessionID}${query ? `?${query}` : ''}`;
}

/** focusOn names a focus in the address without a hashchange, so the view is not rebuilt. */
export function focusOn(sessionID, focus) {
  if (location.hash.startsWith(`#/sessions/${sessionID}`)) history.replaceState(history.state, '', focusHref(sessionID, focus));
}
