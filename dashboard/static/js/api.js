// The dashboard's only way to the server: the public GraphQL API at /graphql,
// over HTTP for queries and mutations and over WebSocket
// (graphql-transport-ws, the vendored graphql-ws client) for subscriptions,
// always with the admin's API key.

import { createClient } from '../vendor/graphql-ws/client.mjs';

const storageKey = 'sessiongraph.apiKey';
const endpoint = '/graphql';

/** APIError is a failed call: its message is meant for the admin to read. */
export class APIError extends Error {
  constructor(message, { code = '', status = 0 } = {}) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

let onRefused = () => {};

/** whenKeyRefused sets what happens when the server stops accepting the stored key. */
export function whenKeyRefused(f) { onRefused = f; }

/** The API key, kept for this browser tab only (sessionStorage). */
export const auth = {
  get key() { return sessionStorage.getItem(storageKey) || ''; },
  set(key) { sessionStorage.setItem(storageKey, key); },
  clear() {
    sessionStorage.removeItem(storageKey);
    closeLive();
  },
};

/**
 * gql runs a query or mutation and returns its data; any GraphQL error, HTTP
 * failure or network failure becomes an APIError that says what happened.
 */
export async function gql(query, variables = {}, key = auth.key) {
  let res;
  try {
    res = await fetch(endpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
      body: JSON.stringify({ query, variables }),
    });
  } catch (e) {
    throw new APIError(`Cannot reach the server (${e.message}). Check that sessiongraph is running and try again.`, { code: 'NETWORK' });
  }
  const text = await res.text();
  let body = null;
  try { body = JSON.parse(text); } catch { /* shown below as HTTP text */ }
  let err = null;
  if (body && Array.isArray(body.errors) && body.errors.length > 0) {
    const code = body.errors[0].extensions?.code || (res.status === 401 ? 'UNAUTHENTICATED' : '');
    err = new APIError(body.errors.map((e) => e.message).join('; '), { code, status: res.status });
  } else if (!res.ok || !body || !body.data) {
    const detail = text.trim() ? `: ${text.trim().slice(0, 300)}` : ' with an empty body';
    err = new APIError(`The server answered HTTP ${res.status}${detail}`, {
      code: res.status === 401 ? 'UNAUTHENTICATED' : '', status: res.status,
    });
  }
  if (err) {
    if (err.code === 'UNAUTHENTICATED' && key && key === auth.key) onRefused(describe(err));
    throw err;
  }
  return body.data;
}

/** describe turns a failure into a sentence for the admin, with its code. */
export function describe(err) {
  if (!(err instanceof APIError)) return `Something went wrong in the dashboard: ${err && err.message ? err.message : err}`;
  switch (err.code) {
    case 'UNAUTHENTICATED':
      return `The server did not accept this API key: ${sentence(err.message)} (UNAUTHENTICATED)`;
    case 'FORBIDDEN':
      return `This API key is not allowed to do that: ${sentence(err.message)} Admin actions need an ADMIN key. (FORBIDDEN)`;
    case 'NETWORK':
    case '':
      return err.message;
    default:
      return `${err.message} (${err.code})`;
  }
}

function sentence(text) {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

/** signIn checks a key by asking the server who it belongs to. */
export async function signIn(key) {
  return (await gql('query Viewer { viewer { role tenant name } }', {}, key)).viewer;
}

// Subscriptions: one WebSocket for the tab, opened when the first
// subscription starts and retried with backoff when it drops.

let client = null;
const liveWatchers = new Set();
let liveState = { state: 'idle', text: 'Live updates are off' };

function setLive(state, text) {
  liveState = { state, text };
  for (const f of liveWatchers) f(liveState);
}

/** watchLive calls f with the connection state now and on each change. */
export function watchLive(f) {
  liveWatchers.add(f);
  f(liveState);
  return () => liveWatchers.delete(f);
}

function closeText(ev) {
  if (ev && ev.code === 4403) return 'Live updates stopped: the server refused this API key (4403). Sign in again.';
  if (ev && ev.code) return `Live updates disconnected (${ev.code}${ev.reason ? `: ${ev.reason}` : ''}); reconnecting…`;
  return 'Live updates disconnected; reconnecting…';
}

function live() {
  if (client) return client;
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${endpoint}`;
  client = createClient({
    url,
    lazy: true,
    lazyCloseTimeout: 2000,
    connectionParams: () => ({ Authorization: `Bearer ${auth.key}` }),
    retryAttempts: Infinity,
    retryWait: (retries) => new Promise((resolve) => setTimeout(resolve, backoff(retries + 1))),
    shouldRetry: (ev) => !(ev && ev.code === 4403),
    on: {
      connecting: () => setLive('connecting', 'Connecting live updates…'),
      connected: () => {
        setLive('live', 'Live');
      },
      closed: (ev) => {
        if (!client) return;
        if (ev && ev.code === 4403) onRefused(closeText(ev));
        setLive(ev && ev.code === 1000 ? 'idle' : 'offline', ev && ev.code === 1000 ? 'Live updates are off' : closeText(ev));
      },
    },
  });
  return client;
}

function closeLive() {
  if (!client) return;
  const c = client;
  client = null;
  c.dispose();
  setLive('idle', 'Live updates are off');
}

// Resubscription backoff: the first retry comes soon (a server restart is
// over in seconds), later ones wait longer, never more than retryMaxMs.
const retryFirstMs = 500;
const retryMaxMs = 10000;
// A subscription that ran this long before it ended was healthy: the next
// retry starts the backoff over.
const healthyMs = 30000;

function backoff(attempt) {
  const ms = Math.min(retryMaxMs, retryFirstMs * 2 ** attempt);
  return ms / 2 + Math.random() * (ms / 2);
}

/**
 * subscribe starts a subscription; next gets each result's data and error
 * gets a sentence. With resume, which picks the cursor out of a result (an
 * event's sequence, or for the feed of every session its cursor string),
 * variables.after follows the stream, so that a resubscription resumes where
 * it stopped. The subscription lasts until the returned function stops it.
 * A replica that shuts down closes the socket with 1012 Service Restart:
 * graphql-ws reconnects (through the load balancer, to another replica)
 * and sends the same payload again, whose after is the last cursor seen, so
 * nothing is missed or repeated. When the server ends the stream
 * (complete) or the connection is lost for good, it subscribes again by
 * itself, with backoff, from the last cursor. Only a refusal stops it: a
 * GraphQL error for the operation, or a refused API key (4403).
 */
export function subscribe(query, variables, { next, error, resume }) {
  const payload = { query, variables: { ...variables } };
  let stopped = false;
  let attempt = 0;
  let timer = 0;
  let started = 0;
  let unsubscribe = () => {};

  function again() {
    if (stopped) return;
    if (Date.now() - started > healthyMs) attempt = 0;
    clearTimeout(timer);
    timer = setTimeout(start, backoff(attempt++));
  }

  function start() {
    if (stopped) return;
    started = Date.now();
    unsubscribe = live().subscribe(payload, {
      next: (result) => {
        if (stopped) return;
        if (result.errors && result.errors.length) {
          const e = result.errors[0];
          error(describe(new APIError(e.message, { code: e.extensions?.code || '' })));
          return;
        }
        attempt = 0;
        if (resume) {
          const cursor = resume(result.data);
          if (typeof cursor === 'number' || typeof cursor === 'string') payload.variables.after = cursor;
        }
        next(result.data);
      },
      error: (e) => {
        if (stopped) return;
        if (Array.isArray(e)) {
          error(describe(new APIError(e.map((x) => x.message).join('; '), { code: e[0]?.extensions?.code || '' })));
        } else if (e && e.code === 4403) {
          error(closeText(e));
        } else {
          again(); // a close the client gave up on: the header says so while we retry
        }
      },
      complete: again, // not asked for: stop() sets stopped first
    });
  }

  start();
  return () => {
    stopped = true;
    clearTimeout(timer);
    unsubscribe();
  };
}
