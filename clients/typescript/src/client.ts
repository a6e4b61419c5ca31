// The client: typed operations (src/generated, from src/operations) over HTTP,
// the agent loop's calls, a turn helper, and subscriptions that resume by cursor.
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';

import { SessionGraphError, type GraphQLErrorJSON } from './errors.js';
import * as ops from './generated/graphql.js';
import {
  resumable,
  sseTransport,
  wsTransport,
  type SubscribeOptions,
  type Transport,
  type TransportKind,
} from './subscriptions.js';

export interface ClientOptions {
  /**
   * The server, such as http://127.0.0.1:8080 or http://127.0.0.1:8080/graphql (/graphql is
   * added when missing); default: the environment variable SG_URL.
   */
  url?: string;
  /** An API key, sent as Authorization: Bearer <key>; default: SG_API_KEY (SG_KEY, deprecated). */
  apiKey?: string;
  /** The transport of subscriptions unless one says otherwise (default ws). */
  transport?: TransportKind;
  /** A fetch implementation (default: the global fetch). */
  fetch?: typeof fetch;
  /** A WebSocket constructor (default: the global one, else the `ws` package). */
  webSocketImpl?: unknown;
}

type Input<T extends { input: unknown }> = T['input'];
/** A turn call's input, without the sessionID the turn already knows. */
type InTurn<T> = Omit<T, 'sessionID'>;

export type Session = ops.SessionFieldsFragment;
export type Turn = ops.TurnFieldsFragment;
export type ContextBuild = ops.ContextBuildFieldsFragment;
export type SessionEvent = ops.SessionEventFieldsFragment;
export type EntityChange = NonNullable<ops.EntityChangesSubscription['entityChanges']>;

/** What the turn callback returns: the assistant's message, or it with the execution summary. */
export type TurnEnd = string | { assistantMessage: string; summary?: ops.ExecutionSummaryInput };

/** Subscription options: the transport, and resume settings. */
export interface LiveOptions extends SubscribeOptions {
  transport?: TransportKind;
}

export class SessionGraphClient {
  readonly url: string;
  private readonly apiKey: string;
  private readonly fetchImpl: typeof fetch;
  private readonly defaultTransport: TransportKind;
  private readonly transports: Partial<Record<TransportKind, Transport>> = {};
  private readonly transportOptions: ClientOptions & { url: string; apiKey: string };

  constructor(opts: ClientOptions = {}) {
    const { url, apiKey } = fromEnv(opts);
    this.url = url;
    this.apiKey = apiKey;
    this.fetchImpl = opts.fetch ?? globalThis.fetch.bind(globalThis);
    this.defaultTransport = opts.transport ?? 'ws';
    this.transportOptions = { ...opts, url, apiKey };
  }

  /**
   * Sends a typed query or mutation; answers its data, or throws SessionGraphError
   * (extensions.code, field) for the first of the response's errors.
   */
  async request<TResult, TVariables>(
    document: DocumentTypeDecoration<TResult, TVariables>,
    ...[variables]: TVariables extends Record<string, never> ? [] | [TVariables] : [TVariables]
  ): Promise<TResult> {
    let res: Response;
    try {
      res = await this.fetchImpl(this.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/graphql-response+json, application/json',
          authorization: `Bearer ${this.apiKey}`,
        },
        body: JSON.stringify({ query: String(document), variables: variables ?? {} }),
      });
    } catch (err) {
      throw SessionGraphError.network(err);
    }
    if (res.status < 500 && (res.headers.get('content-type') ?? '').startsWith('text/html')) {
      throw SessionGraphError.configuration(
        `${this.url} answered a web page (HTTP ${res.status}, text/html), not GraphQL: give the server's address, such as http://127.0.0.1:8080 or http://127.0.0.1:8080/graphql`,
        res.status,
      );
    }
    let body: { data?: TResult | null; errors?: GraphQLErrorJSON[] };
    try {
      body = (await res.json()) as typeof body;
    } catch (err) {
      throw res.ok
        ? SessionGraphError.network(err)
        : new SessionGraphError([{ message: `HTTP ${res.status}`, extensions: { code: httpCode(res.status) } }], {
            status: res.status,
          });
    }
    if (body.errors?.length) {
      const retryAfter = Number(res.headers.get('retry-after')) || undefined;
      throw new SessionGraphError(body.errors, { status: res.status, retryAfter });
    }
    if (!res.ok || body.data == null) {
      throw new SessionGraphError([{ message: `HTTP ${res.status} without data`, extensions: { code: httpCode(res.status) } }], {
        status: res.status,
      });
    }
    return body.data;
  }

  // Sessions.

  async openSession(input: Input<ops.OpenSessionMutationVariables>) {
    return (await this.request(ops.OpenSessionDocument, { input })).openSession;
  }

  async updateSession(input: Input<ops.UpdateSessionMutationVariables>) {
    return (await this.request(ops.UpdateSessionDocument, { input })).updateSession.session;
  }

  async resetConversation(input: Input<ops.ResetConversationMutationVariables>) {
    return (await this.request(ops.ResetConversationDocument, { input })).resetConversation.session;
  }

  /** A session, or null when there is none (another tenant's is not found either). */
  async session(id: string) {
    return (await this.request(ops.SessionDocument, { id })).session;
  }

  async sessionByKey(tenant: string, externalKey: string) {
    return (await this.request(ops.SessionByKeyDocument, { tenant, externalKey })).sessionByKey;
  }

  /** A page of sessions, for a frontend's list. */
  async sessions(variables: ops.SessionsQueryVariables = {}) {
    return (await this.request(ops.SessionsDocument, variables)).sessions;
  }

  /** A session with a page of its turns, refs, artifacts and events, and its tiers. */
  async sessionGraph(variables: ops.SessionGraphQueryVariables) {
    return (await this.request(ops.SessionGraphDocument, variables)).session;
  }

  async viewer() {
    return (await this.request(ops.ViewerDocument)).viewer;
  }

  // Turns.

  async beginTurn(input: Input<ops.BeginTurnMutationVariables>) {
    return (await this.request(ops.BeginTurnDocument, { input })).beginTurn.turn;
  }

  async endTurn(input: Input<ops.EndTurnMutationVariables>) {
    return (await this.request(ops.EndTurnDocument, { input })).endTurn.turn;
  }

  /** Records a user message and its answer as the next turn, begun and ended in one request and one commit. */
  async recordExchange(input: Input<ops.RecordExchangeMutationVariables>) {
    return (await this.request(ops.RecordExchangeDocument, { input })).recordExchange.turn;
  }

  /**
   * Appends items to the open turn (docs/api.md, "Items"), each its JSON text, kept byte for byte:
   * `JSON.stringify(item)` of the Agents SDK's messages, tool calls and their outputs, reasoning.
   * Answers the turn and the items as Turn.items shows them.
   */
  async recordItems(input: Input<ops.RecordItemsMutationVariables>) {
    return (await this.request(ops.RecordItemsDocument, { input })).recordItems;
  }

  /** The items of the session's turn number, in order; [] when there is no such turn. */
  async turnItems(sessionID: string, number: number) {
    const { session } = await this.request(ops.TurnItemsDocument, { session: sessionID, number });
    if (!session) throw new SessionGraphError([{ message: `session ${sessionID} not found (or expired)`, extensions: { code: 'NOT_FOUND' } }]);
    return session.turns.edges?.[0]?.node?.items ?? [];
  }

  async failTurn(input: Input<ops.FailTurnMutationVariables>) {
    return (await this.request(ops.FailTurnDocument, { input })).failTurn.turn;
  }

  async updateTurn(input: Input<ops.UpdateTurnMutationVariables>) {
    return (await this.request(ops.UpdateTurnDocument, { input })).updateTurn.turn;
  }

  async recordStepResult(input: Input<ops.RecordStepResultMutationVariables>) {
    return (await this.request(ops.RecordStepResultDocument, { input })).recordStepResult.stepResult;
  }

  /**
   * Runs one turn: begins it with the user's message, runs fn, and ends the turn with
   * what fn returns (the assistant's message, or it with the execution summary). When fn
   * throws, the turn fails with the error's message and the error is thrown again.
   * Answers the ended turn.
   */
  async turn(sessionID: string, userMessage: string, fn: (turn: TurnScope) => Promise<TurnEnd>): Promise<Turn> {
    const begun = await this.beginTurn({ sessionID, userMessage });
    let end: TurnEnd;
    try {
      end = await fn(new TurnScope(this, sessionID, begun));
    } catch (err) {
      await this.failTurn({ sessionID, reason: reasonOf(err) }).catch(() => {
        // The turn's own error is the one to report.
      });
      throw err;
    }
    const { assistantMessage, summary } = typeof end === 'string' ? { assistantMessage: end, summary: undefined } : end;
    return this.endTurn({ sessionID, assistantMessage, ...(summary ? { summary } : {}) });
  }

  // The ref registry. Each call answers its payload as the schema names it ({ ref }, { refs },
  // { promoted, ref }, { records, refs, enrichmentQueue }), as the Python client does: a ref is
  // always the same Ref object, under .ref or .refs.

  async recordRead(input: Input<ops.RecordReadMutationVariables>) {
    return (await this.request(ops.RecordReadDocument, { input })).recordRead;
  }

  async recordUpdated(input: Input<ops.RecordUpdatedMutationVariables>) {
    return (await this.request(ops.RecordUpdatedDocument, { input })).recordUpdated;
  }

  async recordGenerated(input: Input<ops.RecordGeneratedMutationVariables>) {
    return (await this.request(ops.RecordGeneratedDocument, { input })).recordGenerated;
  }

  async recordCreated(input: Input<ops.RecordCreatedMutationVariables>) {
    return (await this.request(ops.RecordCreatedDocument, { input })).recordCreated;
  }

  async recordDeleted(input: Input<ops.RecordDeletedMutationVariables>) {
    return (await this.request(ops.RecordDeletedDocument, { input })).recordDeleted;
  }

  async recordUserAction(input: Input<ops.RecordUserActionMutationVariables>) {
    return (await this.request(ops.RecordUserActionDocument, { input })).recordUserAction;
  }

  async mentionEntity(input: Input<ops.MentionEntityMutationVariables>) {
    return (await this.request(ops.MentionEntityDocument, { input })).mentionEntity;
  }

  async updateArtifact(input: Input<ops.UpdateArtifactMutationVariables>) {
    return (await this.request(ops.UpdateArtifactDocument, { input })).updateArtifact;
  }

  async clearArtifact(input: Input<ops.ClearArtifactMutationVariables>) {
    return (await this.request(ops.ClearArtifactDocument, { input })).clearArtifact;
  }

  async applyEnrichment(input: Input<ops.ApplyEnrichmentMutationVariables>) {
    return (await this.request(ops.ApplyEnrichmentDocument, { input })).applyEnrichment;
  }

  async retainRef(input: Input<ops.RetainRefMutationVariables>) {
    return (await this.request(ops.RetainRefDocument, { input })).retainRef;
  }

  async releaseRef(input: Input<ops.ReleaseRefMutationVariables>) {
    return (await this.request(ops.ReleaseRefDocument, { input })).releaseRef;
  }

  async resolveRefs(sessionID: string, refs: string[]) {
    return (await this.session$(ops.ResolveRefsDocument, { sessionID, refs })).resolveRefs;
  }

  /** Refs to UUIDs in the id and FK fields of filters on an entity type, named by entityType or table. */
  async translateFilters(
    sessionID: string,
    on: { entityType: string; table?: undefined } | { table: string; entityType?: undefined },
    filters: ops.FilterInput[],
  ) {
    return (await this.session$(ops.TranslateFiltersDocument, { sessionID, ...on, filters })).translateFilters;
  }

  async translatePayload(sessionID: string, entityType: string, data: Record<string, unknown>) {
    return (await this.session$(ops.TranslatePayloadDocument, { sessionID, entityType, data })).translatePayload;
  }

  async readRefs(sessionID: string, refs: string[]) {
    return (await this.session$(ops.ReadRefsDocument, { sessionID, refs })).readRefs;
  }

  async enrichmentQueue(sessionID: string) {
    return (await this.session$(ops.EnrichmentQueueDocument, { sessionID })).enrichmentQueue;
  }

  // Context builds.

  /** The prompt context of a pipeline node (UNDERSTAND, THINK, ACT, REPLY, MESSAGES). */
  async context(sessionID: string, node: ops.ContextNode, options?: ops.ContextOptions): Promise<ContextBuild> {
    return (await this.session$(ops.ContextDocument, { sessionID, node, ...(options ? { options } : {}) })).context;
  }

  /** Builds a node's context and records it as a receipt of the current turn: the build to send, and its receipt. */
  async recordContext(input: Input<ops.RecordContextMutationVariables>) {
    return (await this.request(ops.RecordContextDocument, { input })).recordContext;
  }

  /**
   * Records the model call a recorded build fed (model, tokens, latencyMs, cost in US dollars,
   * finishReason, error when it failed): name its receiptID, or its sessionID and node (the
   * node's newest build in the current turn).
   */
  async recordModelCall(input: Input<ops.RecordModelCallMutationVariables>) {
    return (await this.request(ops.RecordModelCallDocument, { input })).recordModelCall.modelCall;
  }

  /** The sums of a session's model calls: calls, failed calls, tokens, latency and cost. */
  async modelCallTotals(sessionID: string) {
    return (await this.session$(ops.ModelCallTotalsDocument, { sessionID })).modelCallTotals;
  }

  async workingMemory(sessionID: string, everyNTurns?: number) {
    return (await this.session$(ops.WorkingMemoryDocument, { sessionID, ...(everyNTurns ? { everyNTurns } : {}) }))
      .workingMemory;
  }

  // Keys (ADMIN).

  async createAPIKey(input: Input<ops.CreateAPIKeyMutationVariables>) {
    return (await this.request(ops.CreateAPIKeyDocument, { input })).createAPIKey;
  }

  async revokeAPIKey(id: string) {
    return (await this.request(ops.RevokeAPIKeyDocument, { input: { id } })).revokeAPIKey.apiKey;
  }

  // Live.

  /**
   * A session's events after the sequence `after` (0: from its first), then live, in
   * order, each once, resuming after the last one received whenever the connection
   * breaks. Without `after`, new events only: the client reads the session's last
   * sequence first, so none committed while it subscribes is missed either.
   */
  async *sessionEvents(sessionID: string, opts: LiveOptions & { after?: number } = {}): AsyncGenerator<SessionEvent> {
    const after = opts.after ?? (await this.lastSequence(sessionID));
    yield* resumable(
      this.transport(opts.transport),
      {
        query: String(ops.SessionEventsDocument),
        variables: (cursor) => ({ sessionID, after: cursor }),
        item: (data) => (data as ops.SessionEventsSubscription).sessionEvents,
        cursor: (ev) => ev.sequence,
      },
      after,
      opts,
    );
  }

  /** Ref and artifact changes of a session (optionally of some entity types), resumed like sessionEvents. */
  async *entityChanges(
    sessionID: string,
    opts: LiveOptions & { after?: number; entityTypes?: string[] } = {},
  ): AsyncGenerator<EntityChange> {
    const after = opts.after ?? (await this.lastSequence(sessionID));
    const entityTypes = opts.entityTypes;
    yield* resumable(
      this.transport(opts.transport),
      {
        query: String(ops.EntityChangesDocument),
        variables: (cursor) => ({ sessionID, after: cursor, ...(entityTypes ? { entityTypes } : {}) }),
        item: (data) => (data as ops.EntityChangesSubscription).entityChanges,
        cursor: (change) => change.sequence,
      },
      after,
      opts,
    );
  }

  /**
   * Sessions opened, updated, expired or deleted (the admin list), or the event
   * kinds named in `kinds` (such as turn.began), after the feed cursor `after`
   * ("" from the first; omitted: from now), resumed after the last event's cursor.
   */
  async *sessionsChanged(opts: LiveOptions & { after?: string; kinds?: string[] } = {}): AsyncGenerator<SessionEvent> {
    const after = opts.after ?? (await this.request(ops.SessionsChangedCursorDocument)).sessionsChangedCursor;
    yield* resumable(
      this.transport(opts.transport),
      {
        query: String(ops.SessionsChangedDocument),
        variables: (cursor) => ({ after: cursor, kinds: opts.kinds ?? null }),
        item: (data) => (data as ops.SessionsChangedSubscription).sessionsChanged,
        cursor: (ev) => ev.cursor,
      },
      after,
      opts,
    );
  }

  /** A fresh context build now and after each change; after a disconnect, a fresh build again. */
  async *contextUpdated(
    sessionID: string,
    node: ops.ContextNode,
    opts: LiveOptions & { options?: ops.ContextOptions } = {},
  ): AsyncGenerator<ContextBuild> {
    const options = opts.options;
    yield* resumable<ContextBuild, never>(
      this.transport(opts.transport),
      {
        query: String(ops.ContextUpdatedDocument),
        variables: () => ({ sessionID, node, ...(options ? { options } : {}) }),
        item: (data) => (data as ops.ContextUpdatedSubscription).contextUpdated,
        cursor: () => undefined,
      },
      undefined,
      opts,
    );
  }

  /** Closes the client's sockets and streams; a later subscription opens new ones. */
  async close(): Promise<void> {
    const open = Object.values(this.transports);
    delete this.transports.ws;
    delete this.transports.sse;
    await Promise.all(open.map((t) => t.dispose()));
  }

  private transport(kind: TransportKind = this.defaultTransport): Transport {
    const make = kind === 'sse' ? sseTransport : wsTransport;
    return (this.transports[kind] ??= make(this.transportOptions));
  }

  private async lastSequence(sessionID: string): Promise<number> {
    const session = (await this.request(ops.LastEventSequenceDocument, { id: sessionID })).session;
    if (!session) throw notFound(sessionID);
    return session.events.edges?.[0]?.node?.sequence ?? 0;
  }

  /** Runs a query on session(id: sessionID) and answers the session, NOT_FOUND when there is none. */
  private async session$<TSession, TVariables extends { sessionID: string }>(
    document: DocumentTypeDecoration<{ session: TSession | null }, TVariables>,
    variables: TVariables,
  ): Promise<TSession> {
    const send = this.request.bind(this) as (d: unknown, v: unknown) => Promise<{ session: TSession | null }>;
    const { session } = await send(document, variables);
    if (!session) throw notFound(variables.sessionID);
    return session;
  }
}

/** The calls of one open turn: each knows its session. */
export class TurnScope {
  constructor(
    private readonly client: SessionGraphClient,
    readonly sessionID: string,
    /** The turn as beginTurn answered it. */
    readonly turn: Turn,
  ) {}

  get number(): number {
    return this.turn.number;
  }

  recordItems(input: InTurn<Input<ops.RecordItemsMutationVariables>>) {
    return this.client.recordItems({ ...input, sessionID: this.sessionID });
  }

  recordRead(input: InTurn<Input<ops.RecordReadMutationVariables>>) {
    return this.client.recordRead({ ...input, sessionID: this.sessionID });
  }

  recordUpdated(input: InTurn<Input<ops.RecordUpdatedMutationVariables>>) {
    return this.client.recordUpdated({ ...input, sessionID: this.sessionID });
  }

  recordGenerated(input: InTurn<Input<ops.RecordGeneratedMutationVariables>>) {
    return this.client.recordGenerated({ ...input, sessionID: this.sessionID });
  }

  recordCreated(input: InTurn<Input<ops.RecordCreatedMutationVariables>>) {
    return this.client.recordCreated({ ...input, sessionID: this.sessionID });
  }

  recordDeleted(input: InTurn<Input<ops.RecordDeletedMutationVariables>>) {
    return this.client.recordDeleted({ ...input, sessionID: this.sessionID });
  }

  recordStepResult(input: InTurn<Input<ops.RecordStepResultMutationVariables>>) {
    return this.client.recordStepResult({ ...input, sessionID: this.sessionID });
  }

  update(summary: ops.ExecutionSummaryInput) {
    return this.client.updateTurn({ sessionID: this.sessionID, summary });
  }

  mentionEntity(refs: string[]) {
    return this.client.mentionEntity({ sessionID: this.sessionID, refs });
  }

  retainRef(ref: string, reason: string) {
    return this.client.retainRef({ sessionID: this.sessionID, ref, reason });
  }

  resolveRefs(refs: string[]) {
    return this.client.resolveRefs(this.sessionID, refs);
  }

  translateFilters(
    on: { entityType: string; table?: undefined } | { table: string; entityType?: undefined },
    filters: ops.FilterInput[],
  ) {
    return this.client.translateFilters(this.sessionID, on, filters);
  }

  readRefs(refs: string[]) {
    return this.client.readRefs(this.sessionID, refs);
  }

  context(node: ops.ContextNode, options?: ops.ContextOptions) {
    return this.client.context(this.sessionID, node, options);
  }
}

function reasonOf(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message || 'the turn failed';
}

function notFound(id: string): SessionGraphError {
  return new SessionGraphError([{ message: `session ${id} not found`, extensions: { code: 'NOT_FOUND' } }]);
}

function httpCode(status: number): string {
  if (status === 401) return 'UNAUTHENTICATED';
  if (status === 413) return 'REQUEST_TOO_LARGE';
  if (status === 503) return 'UNAVAILABLE';
  if (status >= 500) return 'INTERNAL';
  return 'INVALID_REQUEST';
}

/** The environment variables a client reads for what its options leave out. */
export const URL_ENV = 'SG_URL';
export const KEY_ENV = 'SG_API_KEY';
/** The key's variable before 0.2 (the Python client's name): still read, with a deprecation warning. */
export const OLD_KEY_ENV = 'SG_KEY';

let warnedOldKey = false;

/** The URL (ending in /graphql) and key from the options, else from the environment. */
function fromEnv(opts: ClientOptions): { url: string; apiKey: string } {
  const env = typeof process === 'undefined' ? {} : process.env;
  const url = opts.url || env[URL_ENV];
  if (!url) throw SessionGraphError.configuration(`no URL: pass { url } or set ${URL_ENV}`);
  let apiKey = opts.apiKey || env[KEY_ENV];
  if (!apiKey && env[OLD_KEY_ENV]) {
    apiKey = env[OLD_KEY_ENV];
    if (!warnedOldKey && typeof process !== 'undefined') {
      warnedOldKey = true;
      process.emitWarning(`${OLD_KEY_ENV} is deprecated: set ${KEY_ENV}`, 'DeprecationWarning');
    }
  }
  if (!apiKey) throw SessionGraphError.configuration(`no API key: pass { apiKey } or set ${KEY_ENV}`);
  return { url: endpoint(url), apiKey };
}

/** The GraphQL endpoint of a server's base URL: /graphql is added when it is missing. */
export function endpoint(url: string): string {
  const trimmed = url.replace(/\/+$/, '');
  return trimmed.endsWith('/graphql') ? trimmed : `${trimmed}/graphql`;
}
