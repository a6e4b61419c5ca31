// Session memory for the OpenAI Agents SDK (@openai/agents-core, an optional peer dependency):
// a sessiongraph session's turns as the SDK's Session interface. Import it from
// '@sessiongraph/client/openai-agents'. docs/adapters.md says what it maps and what it cannot.
import type { AgentInputItem, Model, ModelRequest, ModelResponse, Session, StreamEvent } from '@openai/agents-core';

import type { SessionGraphClient } from '../client.js';
import { appendItems, historyTurns, POPPED, recordAll } from './items.js';
import { PendingModelCalls, type ModelCallReport, type PriceFunction } from './modelcalls.js';

export type { PriceFunction } from './modelcalls.js';

/** A user message (with or without its type) begins a turn. */
export function beginsTurn(item: AgentInputItem): boolean {
  const i = item as { type?: string; role?: string };
  return i.role === 'user' && (i.type ?? 'message') === 'message';
}

/**
 * The Agents SDK's Session over one sessiongraph session: every item the SDK adds is kept as a
 * turn's item (recordItems), as its JSON text, and getItems answers them all in order, as the SDK's
 * MemorySession does. A user message begins a turn; the items after it, up to the next user
 * message, are that turn's.
 */
export class SessionGraphSession implements Session {
  constructor(
    readonly client: SessionGraphClient,
    /** The sessiongraph session's id. */
    readonly sessionID: string,
  ) {
    this.calls = new PendingModelCalls(client, sessionID);
  }

  /** The model calls made since the SDK last saved items. */
  private readonly calls: PendingModelCalls;

  /** Opens (or reopens) the session of (tenant, externalKey). */
  static async open(client: SessionGraphClient, tenant: string, externalKey: string): Promise<SessionGraphSession> {
    const { session } = await client.openSession({ tenant, externalKey });
    return new SessionGraphSession(client, session.id);
  }

  async getSessionId(): Promise<string> {
    return this.sessionID;
  }

  /** Every item added, oldest first; with limit, the newest limit of them. */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    const items = (await historyTurns(this.client, this.sessionID)).flatMap((t) => t.items.map((json) => JSON.parse(json) as AgentInputItem));
    if (limit === undefined) return items;
    return limit > 0 ? items.slice(-limit) : [];
  }

  /**
   * Appends the items to the open turn; a user message ends it (with no answer of its own: the
   * assistant's messages are its items) and begins the next. Each item is kept as JSON.stringify(item).
   */
  async addItems(items: AgentInputItem[]): Promise<void> {
    await appendItems(this.client, this.sessionID, items.map((item) => ({ json: JSON.stringify(item), beginsTurn: beginsTurn(item) })));
    // The SDK saves a run's items once it completes: its model calls belong to the turn they are in now.
    await this.calls.flush();
  }

  /**
   * model, with each of its calls recorded (recordModelCall) against the session's MESSAGES build
   * of the run's turn, once the SDK saved the run's items: the model name given, the tokens of the
   * response's usage, the latency, the finish reason (tool_calls when it called a tool, length
   * when a message is incomplete, else stop), and the cost the price function answers (0 without
   * one). A call that throws is recorded at once, failed, in a turn of its own (docs/adapters.md).
   */
  recordModelCalls(model: Model, options: { name: string; price?: PriceFunction }): Model {
    return new RecordedModel(model, options.name, this.calls, options.price);
  }

  /**
   * Removes and answers the newest item; undefined when there is none. The items since the last user
   * message (that message included) are the open turn's: popping one fails that turn and records the
   * others again in a new one. An item of an ended turn cannot be taken back: that throws
   * (clearSession starts over).
   */
  async popItem(): Promise<AgentInputItem | undefined> {
    const last = (await historyTurns(this.client, this.sessionID)).filter((t) => t.items.length > 0).at(-1);
    if (!last) return undefined;
    if (last.status !== 'OPEN') {
      throw new Error(
        'sessiongraph keeps ended turns: popItem only removes the items since the last user message; clearSession starts the conversation over',
      );
    }
    await this.client.failTurn({ sessionID: this.sessionID, reason: POPPED });
    if (last.items.length > 1) {
      await this.client.beginTurn({ sessionID: this.sessionID, userMessage: '' });
      await recordAll(this.client, this.sessionID, last.items.slice(0, -1));
    }
    return JSON.parse(last.items.at(-1)!) as AgentInputItem;
  }

  /** Clears the conversation (resetConversation): the turns and their items go; the session, its refs and its system prompt stay. */
  async clearSession(): Promise<void> {
    await this.client.resetConversation({ sessionID: this.sessionID });
  }
}

/** Why a response stopped, from its output: the Responses API's items carry no finish reason. */
function finishReason(output: ModelResponse['output']): string {
  if (output.some((i) => i.type === 'function_call' || i.type === 'hosted_tool_call' || i.type === 'computer_call')) return 'tool_calls';
  if (output.some((i) => i.type === 'message' && (i as { status?: string }).status === 'incomplete')) return 'length';
  return 'stop';
}

/** A Model whose calls are reported to a session's pending model calls. */
class RecordedModel implements Model {
  constructor(
    private readonly inner: Model,
    private readonly name: string,
    private readonly calls: PendingModelCalls,
    private readonly price?: PriceFunction,
  ) {}

  private report(started: number, usage: { inputTokens: number; outputTokens: number }, output: ModelResponse['output'] | null, err?: unknown): ModelCallReport {
    const call = { model: this.name, inputTokens: usage.inputTokens, outputTokens: usage.outputTokens };
    return {
      ...call,
      cost: this.price ? this.price(call) : 0,
      latencyMs: performance.now() - started,
      ...(output ? { finishReason: finishReason(output) } : {}),
      ...(err !== undefined ? { error: err instanceof Error ? `${err.name}: ${err.message}` : String(err) } : {}),
    };
  }

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const started = performance.now();
    let response: ModelResponse;
    try {
      response = await this.inner.getResponse(request);
    } catch (err) {
      await this.calls.failRun(this.report(started, { inputTokens: 0, outputTokens: 0 }, null, err));
      throw err;
    }
    this.calls.add(this.report(started, response.usage, response.output));
    return response;
  }

  async *getStreamedResponse(request: ModelRequest): AsyncIterable<StreamEvent> {
    const started = performance.now();
    try {
      for await (const event of this.inner.getStreamedResponse(request)) {
        if (event.type === 'response_done') this.calls.add(this.report(started, event.response.usage, event.response.output as ModelResponse['output']));
        yield event;
      }
    } catch (err) {
      await this.calls.failRun(this.report(started, { inputTokens: 0, outputTokens: 0 }, null, err));
      throw err;
    }
  }
}
