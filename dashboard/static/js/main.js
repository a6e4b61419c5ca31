// The dashboard's shell: sign-in, the header and the routes
// (#/ the sessions list, #/sessions/<id> one session, #/users/<userID> one
// user across their sessions).

import { auth, describe, signIn, watchLive, whenKeyRefused } from './api.js';
import { errorBox, h, replace } from './dom.js';
import { isListHash, sessionsList } from './list.js';
import { sessionView } from './session.js';
import { userView } from './users.js';
import { rememberViewer, viewer } from './viewer.js';

const main = document.getElementById('main');
const viewerEl = document.getElementById('viewer');
const liveEl = document.getElementById('live');
const signOutEl = document.getElementById('sign-out');

let stopView = () => {};
let onList = false; // the list is shown: it follows its own hash changes

function showHeader() {
  const v = viewer();
  signOutEl.hidden = !auth.key;
  replace(viewerEl, v && auth.key ? [
    h('span', { class: 'viewer-name' }, v.name || 'API key'),
    ' · ', h('span', { id: 'viewer-role' }, v.role),
    v.tenant ? [' · tenant ', h('code', {}, v.tenant)] : ' · all tenants',
  ] : null);
}

function signOut(message = '') {
  auth.clear();
  rememberViewer(null);
  showHeader();
  route(message);
}

function loginView(message) {
  const input = h('input', {
    id: 'api-key', name: 'key', type: 'password', required: true, autocomplete: 'off', spellcheck: 'false',
    'aria-describedby': 'api-key-help',
  });
  const status = h('div', { id: 'login-status', 'aria-live': 'polite' }, message ? errorBox(message) : null);
  const submit = h('button', { type: 'submit', class: 'primary', id: 'sign-in' }, 'Sign in');
  const form = h('form', {
    class: 'login card',
    onsubmit: async (ev) => {
      ev.preventDefault();
      const key = input.value.trim();
      if (!key) { replace(status, errorBox('Enter an API key.')); input.focus(); return; }
      submit.disabled = true;
      replace(status, h('p', { class: 'loading', role: 'status' }, 'Checking the key…'));
      try {
        const who = await signIn(key);
        auth.set(key);
        rememberViewer(who);
        showHeader();
        route();
      } catch (err) {
        replace(status, errorBox(describe(err)));
        submit.disabled = false;
        input.select();
        input.focus();
      }
    },
  },
  h('h1', {}, 'Sign in'),
  h('p', {}, 'The dashboard uses the public GraphQL API with your API key. The key stays in this browser tab only.'),
  h('label', { for: 'api-key' }, 'API key'),
  input,
  h('p', { id: 'api-key-help', class: 'hint' }, h('code', {}, 'make run'), ' prints a first admin key when it starts.'),
  submit,
  status);
  replace(main, form);
  input.focus();
}

function route(message = '') {
  stopView();
  stopView = () => {};
  onList = false;
  if (!auth.key) {
    document.title = 'Sign in · sessiongraph';
    loginView(message);
    return;
  }
  const m = location.hash.match(/^#\/sessions\/([^/?]+)/);
  const u = location.hash.match(/^#\/users\/([^/?]+)/);
  if (m) {
    stopView = sessionView(main, decodeURIComponent(m[1]));
  } else if (u) {
    stopView = userView(main, decodeURIComponent(u[1]));
  } else {
    document.title = 'Sessions · sessiongraph';
    stopView = sessionsList(main);
    onList = true;
  }
}

signOutEl.addEventListener('click', () => signOut());
whenKeyRefused((message) => signOut(message));
watchLive(({ state, text }) => {
  liveEl.dataset.state = state;
  liveEl.textContent = text;
});
// Only #/ hashes are routes: the skip link's #main is not. After a route
// change, focus moves to the new content, as it would on a page load.
window.addEventListener('hashchange', () => {
  if (location.hash && !location.hash.startsWith('#/')) return;
  // From one list state to another (a search, a page, back): the list
  // itself follows, keeping its feed and the focus where the admin is.
  if (onList && auth.key && isListHash(location.hash)) return;
  route();
  if (!auth.key) return;
  main.focus({ preventScroll: true });
  window.scrollTo(0, 0);
});
showHeader();
route();
