// Errors: every GraphQL error the server answers carries a stable
// extensions.code (docs/errors.md); SessionGraphError carries it, with
// the field it names and whether trying again can help.

/** One error of a GraphQL response, as the server sends it. */
export interface GraphQLErrorJSON {
  message: string;
  path?: ReadonlyArray<string | number>;
  extensions?: { code?: string; field?: string; [key: string]: unknown };
}

/**
 * Codes for which the same request may succeed later, as it is (docs/errors.md):
 * the request timed out or was cancelled, the database was unavailable, the key was over its
 * rate or in-flight limit (after retryAfter), a subscriber fell behind (it resumes from its
 * cursor). NETWORK_ERROR is this client's own: the server could not be reached or the
 * connection broke.
 */
export const RETRYABLE_CODES: ReadonlySet<string> = new Set([
  'TIMEOUT',
  'CANCELLED',
  'UNAVAILABLE',
  'RATE_LIMITED',
  'SUBSCRIBER_TOO_SLOW',
  'NETWORK_ERROR',
]);

/**
 * Codes that go away once something else happens first (docs/errors.md): a
 * generated ref is saved (REF_PENDING), the open turn ends (TURN_IN_PROGRESS), a turn
 * begins (NO_OPEN_TURN), other subscriptions end (SUBSCRIPTION_LIMIT). Trying again as
 * is does not help; CONFLICT is retryable only when its message says it was a concurrent change.
 */
export const RETRY_AFTER_CHANGE_CODES: ReadonlySet<string> = new Set([
  'REF_PENDING',
  'TURN_IN_PROGRESS',
  'NO_OPEN_TURN',
  'SUBSCRIPTION_LIMIT',
]);

/** This client's own code for a client set up wrong (see SessionGraphError.configuration). */
export const CONFIGURATION_ERROR = 'CONFIGURATION_ERROR';

/** An error the server answered (or NETWORK_ERROR when there was no answer). */
export class SessionGraphError extends Error {
  /** extensions.code: BAD_USER_INPUT, NOT_FOUND, UNAUTHENTICATED, ... */
  readonly code: string;
  /** extensions.field: the argument at fault, such as records[3].name, when the server names one. */
  readonly field: string | undefined;
  /** The response path of the field that failed, if any. */
  readonly path: ReadonlyArray<string | number> | undefined;
  /** Every error of the response; this error is the first. */
  readonly errors: readonly GraphQLErrorJSON[];
  /** The HTTP status, when the error came with one. */
  readonly status: number | undefined;
  /** Seconds to wait, from Retry-After (503 UNAVAILABLE, 429 RATE_LIMITED). */
  readonly retryAfter: number | undefined;

  constructor(
    errors: readonly GraphQLErrorJSON[],
    opts: { status?: number; retryAfter?: number; cause?: unknown } = {},
  ) {
    const first = errors[0] ?? { message: 'unknown error' };
    super(first.message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'SessionGraphError';
    this.code = first.extensions?.code ?? 'UNKNOWN';
    this.field = first.extensions?.field;
    this.path = first.path;
    this.errors = errors;
    this.status = opts.status;
    this.retryAfter = opts.retryAfter;
  }

  /** True when the same request may succeed if sent again later (see RETRYABLE_CODES). */
  get retryable(): boolean {
    return RETRYABLE_CODES.has(this.code);
  }

  /**
   * The client's own error for a client set up wrong: a URL that answered a web page instead of
   * GraphQL, or no URL or key. Not retryable: the same request goes to the same wrong place.
   */
  static configuration(message: string, status?: number): SessionGraphError {
    return new SessionGraphError([{ message, extensions: { code: CONFIGURATION_ERROR } }], { status });
  }

  /** The client's own error for a server that could not be reached or a connection that broke. */
  static network(cause: unknown): SessionGraphError {
    const message = cause instanceof Error ? cause.message : String(cause);
    return new SessionGraphError([{ message: `network error: ${message}`, extensions: { code: 'NETWORK_ERROR' } }], {
      cause,
    });
  }
}

/** Whether err is a SessionGraphError with this code. */
export function isCode(err: unknown, code: string): err is SessionGraphError {
  return err instanceof SessionGraphError && err.code === code;
}
