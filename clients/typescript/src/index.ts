export { SessionGraphClient, TurnScope, endpoint, URL_ENV, KEY_ENV, OLD_KEY_ENV } from './client.js';
export type { ClientOptions, ContextBuild, EntityChange, LiveOptions, Session, SessionEvent, Turn, TurnEnd } from './client.js';
export { SessionGraphError, RETRYABLE_CODES, RETRY_AFTER_CHANGE_CODES, CONFIGURATION_ERROR, isCode } from './errors.js';
export type { GraphQLErrorJSON } from './errors.js';
export type { SubscribeOptions, TransportKind } from './subscriptions.js';
// Every typed document and type generated from the schema, for request().
export * as operations from './generated/graphql.js';
