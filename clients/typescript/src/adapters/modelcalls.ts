// The model calls an adapter saw (its model, tokens, latency, finish reason, error), recorded with
// recordModelCall (docs/api.md, "Model calls") against the session's MESSAGES build: the window an
// adapter's history feeds. A call is recorded once the framework has saved the run's messages,
// so that it lands in the run's own turn: both frameworks save a run's messages after its model
// calls (the Agents SDK when the run completes, RunnableWithMessageHistory when the chain ends).
import type { SessionGraphClient } from '../client.js';
import { SessionGraphError } from '../errors.js';
import * as ops from '../generated/graphql.js';

/** One model call as the framework reported it. */
export interface ModelCallReport {
  model: string;
  /** In US dollars: the adapter's price function's answer, or 0. */
  cost: number;
  inputTokens: number;
  outputTokens: number;
  latencyMs: number;
  finishReason?: string;
  /** What went wrong; absent when the call succeeded. */
  error?: string;
}

/** What a call cost in US dollars, from its model and tokens; without one, every call costs 0. */
export type PriceFunction = (call: { model: string; inputTokens: number; outputTokens: number }) => number;

/** The reason a turn of failed calls fails with: a run whose model threw saved none of its messages. */
export const FAILED_RUN = 'the model call failed; the framework saved none of the run’s messages';

/**
 * The calls of one session's runs, kept until the framework saves the run's messages (flush,
 * after the adapter appended them) or the run fails (failRun).
 */
export class PendingModelCalls {
  private pending: ModelCallReport[] = [];

  constructor(
    private readonly client: SessionGraphClient,
    private readonly sessionID: string,
    /** The MESSAGES build's options, when a build is recorded for a call. */
    private readonly options?: ops.ContextOptions,
  ) {}

  add(call: ModelCallReport): void {
    this.pending.push(call);
  }

  /** Records the pending calls in the session's current turn (the run's, once its messages are saved). */
  async flush(): Promise<void> {
    const calls = this.pending;
    this.pending = [];
    for (const call of calls) await this.record(call);
  }

  /**
   * Records the pending calls and the one that failed in a turn of their own, which then fails:
   * the framework saved none of the run's messages, and the calls belong to no saved turn. The
   * open turn is ended first (its items can no longer be popped).
   */
  async failRun(call: ModelCallReport): Promise<void> {
    this.add(call);
    const { session } = await this.client.request(ops.LastTurnDocument, { id: this.sessionID });
    if (session?.turns.edges?.[0]?.node?.status === 'OPEN') await this.client.endTurn({ sessionID: this.sessionID, assistantMessage: '' });
    await this.client.beginTurn({ sessionID: this.sessionID, userMessage: '' });
    await this.flush();
    await this.client.failTurn({ sessionID: this.sessionID, reason: `${FAILED_RUN}: ${call.error ?? ''}`.slice(0, 1000) });
  }

  /**
   * Records one call against the newest MESSAGES build of the current turn; with none (or one
   * that fed its 20 calls), the MESSAGES build is recorded first: what the window feeds.
   */
  private async record(call: ModelCallReport): Promise<void> {
    // Cut to the server's limits (docs/api.md), so that INPUT_TOO_LARGE can only mean a full build.
    const input = {
      sessionID: this.sessionID,
      model: call.model.slice(0, 50),
      inputTokens: call.inputTokens,
      outputTokens: call.outputTokens,
      latencyMs: Math.round(call.latencyMs),
      cost: call.cost,
      ...(call.finishReason ? { finishReason: call.finishReason.slice(0, 25) } : {}),
      ...(call.error ? { error: call.error.slice(0, 2500) } : {}),
    };
    try {
      await this.client.recordModelCall({ ...input, node: 'MESSAGES' });
      return;
    } catch (err) {
      if (!(err instanceof SessionGraphError) || (err.code !== 'NOT_FOUND' && err.code !== 'INPUT_TOO_LARGE')) throw err;
    }
    const { receipt } = await this.client.recordContext({ sessionID: this.sessionID, node: 'MESSAGES', ...(this.options ? { options: this.options } : {}) });
    await this.client.recordModelCall({ ...input, receiptID: receipt.id });
  }
}
