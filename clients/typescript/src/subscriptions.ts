// Subscriptions over graphql-ws (WebSocket, graphql-transport-ws) or graphql-sse
// (Server-Sent Events), as async iterators that resume by cursor: after any
// disconnect the client subscribes again from the last item it delivered, so
// each event arrives once, in order. A replica that shuts down says so without
// completing: it closes the socket with 1012 Service Restart, or ends an SSE stream
// with a last UNAVAILABLE error; both resume here (on another replica, through the
// load balancer), while complete ends the iterator, as the stream is over. A revoked or bad key, or any error that
// trying again cannot fix, ends the iterator with a SessionGraphError.
import { createClient as createWSClient, type Client as WSClient } from 'graphql-ws';
import { createClient as createSSEClient, NetworkError, type Client as SSEClient } from 'graphql-sse';

import { SessionGraphError, type GraphQLErrorJSON } from './errors.js';

export type TransportKind = 'ws' | 'sse';

/** What one subscription attempt reports. */
export interface Sink {
  next(data: unknown): void;
  error(err: SessionGraphError): void;
  complete(): void;
}

/** A transport subscribes one operation; the returned function ends it. */
export interface Transport {
  subscribe(query: string, variables: Record<string, unknown>, sink: Sink): () => void;
  dispose(): Promise<void> | void;
}

export interface TransportOptions {
  /** The HTTP URL of /graphql. */
  url: string;
  apiKey: string;
  /** A WebSocket constructor where there is no global one (Node 20: the `ws` package, loaded by default). */
  webSocketImpl?: unknown;
  fetch?: typeof fetch;
}

// Close codes after which subscribing again cannot succeed: a bad or revoked key
// (4403), and protocol faults (4400 malformed, 4401 unacknowledged, 4409 duplicate id,
// 4429 too many inits, 1009 too big). Every other close, and a broken socket, resumes.
const fatalCloseCodes: Record<number, string> = {
  4403: 'UNAUTHENTICATED',
  4400: 'INVALID_REQUEST',
  4401: 'UNAUTHENTICATED',
  4409: 'INVALID_REQUEST',
  4429: 'INVALID_REQUEST',
  1009: 'INPUT_TOO_LARGE',
};

function fromGraphQLErrors(errors: readonly GraphQLErrorJSON[]): SessionGraphError {
  return new SessionGraphError(errors);
}

function isCloseEvent(err: unknown): err is { code: number; reason: string } {
  return typeof err === 'object' && err !== null && typeof (err as { code?: unknown }).code === 'number' &&
    'reason' in err;
}

/** Maps whatever graphql-ws reports to a SessionGraphError. */
export function wsError(err: unknown): SessionGraphError {
  if (Array.isArray(err)) return fromGraphQLErrors(err as GraphQLErrorJSON[]);
  if (isCloseEvent(err)) {
    const code = fatalCloseCodes[err.code];
    if (code) {
      return new SessionGraphError([
        { message: `socket closed ${err.code}: ${err.reason || code}`, extensions: { code } },
      ]);
    }
    return SessionGraphError.network(new Error(`socket closed ${err.code}${err.reason ? `: ${err.reason}` : ''}`));
  }
  return SessionGraphError.network(err instanceof Error ? err : new Error(describe(err)));
}

function describe(err: unknown): string {
  if (typeof err === 'object' && err !== null) {
    const e = err as { message?: unknown; type?: unknown; error?: { message?: unknown } };
    if (typeof e.error?.message === 'string') return e.error.message;
    if (typeof e.message === 'string') return e.message;
    if (typeof e.type === 'string') return `socket ${e.type}`;
  }
  return String(err);
}

/** Maps whatever graphql-sse reports to a SessionGraphError (an HTTP answer's errors when it has them). */
export async function sseError(err: unknown): Promise<SessionGraphError> {
  if (Array.isArray(err)) return fromGraphQLErrors(err as GraphQLErrorJSON[]);
  if (err instanceof NetworkError && err.response) {
    const res = err.response as Response;
    try {
      const body = (await res.json()) as { errors?: GraphQLErrorJSON[] };
      if (body.errors?.length) return new SessionGraphError(body.errors, { status: res.status });
    } catch {
      // not a GraphQL body: fall through
    }
    const code = res.status === 401 ? 'UNAUTHENTICATED' : res.status >= 500 ? 'UNAVAILABLE' : 'INVALID_REQUEST';
    return new SessionGraphError([{ message: err.message, extensions: { code } }], { status: res.status });
  }
  return SessionGraphError.network(err);
}

function wsURL(url: string): string {
  return url.replace(/^http/, 'ws');
}

async function defaultWebSocket(): Promise<unknown> {
  const global = (globalThis as { WebSocket?: unknown }).WebSocket;
  if (global) return global;
  return (await import('ws')).default;
}

/** One graphql-ws client (one socket, opened while a subscription needs it) shared by every subscription. */
export function wsTransport(opts: TransportOptions): Transport {
  let client: Promise<WSClient> | undefined;
  const get = () =>
    (client ??= (async () =>
      createWSClient({
        url: wsURL(opts.url),
        webSocketImpl: opts.webSocketImpl ?? (await defaultWebSocket()),
        connectionParams: { Authorization: `Bearer ${opts.apiKey}` },
        lazy: true,
        // Resuming is ours: graphql-ws would subscribe again with the first cursor.
        retryAttempts: 0,
        lazyCloseTimeout: 0,
      }))());
  return {
    subscribe(query, variables, sink) {
      let stop: (() => void) | undefined;
      let stopped = false;
      get().then(
        (c) => {
          if (stopped) return;
          stop = c.subscribe(
            { query, variables },
            {
              next: (value) => {
                if (value.errors?.length) sink.error(fromGraphQLErrors(value.errors as unknown as GraphQLErrorJSON[]));
                else sink.next(value.data);
              },
              error: (err) => sink.error(wsError(err)),
              complete: () => sink.complete(),
            },
          );
        },
        (err) => sink.error(SessionGraphError.network(err)),
      );
      return () => {
        stopped = true;
        stop?.();
      };
    },
    async dispose() {
      if (client) await (await client).dispose();
    },
  };
}

/** One graphql-sse client (a stream per subscription) shared by every subscription. */
export function sseTransport(opts: TransportOptions): Transport {
  let client: SSEClient | undefined;
  const get = () =>
    (client ??= createSSEClient({
      url: opts.url,
      headers: { Authorization: `Bearer ${opts.apiKey}` },
      retryAttempts: 0,
      ...(opts.fetch ? { fetchFn: opts.fetch } : {}),
    }));
  return {
    subscribe(query, variables, sink) {
      return get().subscribe(
        { query, variables },
        {
          next: (value) => {
            if (value.errors?.length) sink.error(fromGraphQLErrors(value.errors as unknown as GraphQLErrorJSON[]));
            else sink.next(value.data);
          },
          error: (err) => {
            sseError(err).then((e) => sink.error(e));
          },
          complete: () => sink.complete(),
        },
      );
    },
    dispose() {
      client?.dispose();
    },
  };
}

/** How a resumable subscription picks its items and resumes after them. */
export interface ResumeSpec<TItem, TCursor> {
  query: string;
  /** The variables of an attempt that starts after cursor (undefined: as first asked). */
  variables(cursor: TCursor | undefined): Record<string, unknown>;
  /** The item in an attempt's data (null: nothing to deliver). */
  item(data: unknown): TItem | null | undefined;
  /** The cursor to resume after, once item is delivered; undefined for a subscription without one. */
  cursor(item: TItem): TCursor | undefined;
}

export interface SubscribeOptions {
  /** Ends the subscription: the iterator returns. */
  signal?: AbortSignal;
  /** Longest wait between attempts after failures, in ms (default 2,000). */
  maxBackoffMs?: number;
  /** Called before each resume, with the error that caused it (for logs and tests). */
  onResume?: (err: SessionGraphError, attempt: number) => void;
}

type Outcome = { kind: 'next'; data: unknown } | { kind: 'error'; err: SessionGraphError } | { kind: 'complete' };

/**
 * Subscribes through transport and yields each item once, in order, resuming after
 * the last one delivered whenever the connection breaks or the server reports a
 * retryable error (SUBSCRIBER_TOO_SLOW, UNAVAILABLE, ...). Ends when the server
 * completes, the signal aborts or the consumer stops; throws on any other error.
 */
export async function* resumable<TItem, TCursor>(
  transport: Transport,
  spec: ResumeSpec<TItem, TCursor>,
  start: TCursor | undefined,
  opts: SubscribeOptions = {},
): AsyncGenerator<TItem, void, undefined> {
  let cursor = start;
  let failures = 0;
  const maxBackoff = opts.maxBackoffMs ?? 2000;
  while (!opts.signal?.aborted) {
    const queue: Outcome[] = [];
    let wake: (() => void) | undefined;
    let done = false;
    const push = (o: Outcome) => {
      if (done) return;
      if (o.kind !== 'next') done = true;
      queue.push(o);
      wake?.();
    };
    const onAbort = () => push({ kind: 'complete' });
    opts.signal?.addEventListener('abort', onAbort);
    const stop = transport.subscribe(spec.query, spec.variables(cursor), {
      next: (data) => push({ kind: 'next', data }),
      error: (err) => push({ kind: 'error', err }),
      complete: () => push({ kind: 'complete' }),
    });
    let failed: SessionGraphError | undefined;
    try {
      for (;;) {
        if (queue.length === 0) {
          await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
          continue;
        }
        const o = queue.shift()!;
        if (o.kind === 'complete') return;
        if (o.kind === 'error') {
          if (!o.err.retryable) throw o.err;
          failed = o.err;
          break;
        }
        const item = spec.item(o.data);
        if (item === null || item === undefined) continue;
        yield item;
        const next = spec.cursor(item);
        if (next !== undefined) cursor = next;
        failures = 0;
      }
    } finally {
      done = true;
      opts.signal?.removeEventListener('abort', onAbort);
      stop();
    }
    failures++;
    opts.onResume?.(failed, failures);
    const delay = Math.min(maxBackoff, 50 * 2 ** Math.min(failures - 1, 10));
    await sleep(delay * (0.5 + Math.random() / 2), opts.signal);
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done);
  });
}
