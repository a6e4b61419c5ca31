// LangChain chat message history (@langchain/core, an optional peer dependency): a sessiongraph
// session as BaseListChatMessageHistory, every message kept as a turn's item. Import it from
// '@sessiongraph/client/langchain'. docs/adapters.md says what it maps and what it cannot.
import { BaseCallbackHandler } from '@langchain/core/callbacks/base';
import { BaseListChatMessageHistory } from '@langchain/core/chat_history';
import {
  AIMessage,
  ChatMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  mapStoredMessageToChatMessage,
  type BaseMessage,
  type StoredMessage,
} from '@langchain/core/messages';
import type { Serialized } from '@langchain/core/load/serializable';
import type { ChatGeneration, LLMResult } from '@langchain/core/outputs';

import type { SessionGraphClient } from '../client.js';
import { SessionGraphError } from '../errors.js';
import * as ops from '../generated/graphql.js';
import { appendItems, historyTurns, type NewItem } from './items.js';
import { PendingModelCalls, type ModelCallReport, type PriceFunction } from './modelcalls.js';

export type { PriceFunction } from './modelcalls.js';

/** The key of the item that carries LangChain's own form of the message (message.toDict()): its last item. */
export const LANGCHAIN = 'langchain';
/** The key marking a message's other items: its text before its tool calls, the calls before the last. */
export const PART = 'langchain_part';

const SERVER_ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

/**
 * The items one message is kept as, in the shapes the server reads (docs/api.md, "Items"), so
 * that its builds show roles, tool calls and their outputs: a message of its role with its text;
 * an AIMessage's text (when it has some or no calls) then each tool call with an id as a
 * function_call; a ToolMessage as the function_call_output of its call; a message of no role the
 * server knows (a FunctionMessage, a ChatMessage of another role) as a langchain_message item, kept
 * as OTHER. The last item carries the message exactly (LangChain's stored form, message.toDict());
 * the others are marked PART. The Python client's sessiongraph.langchain.to_items does the same.
 */
export function messageItems(m: BaseMessage): Record<string, unknown>[] {
  const text = m.text;
  let items: Record<string, unknown>[];
  if (HumanMessage.isInstance(m)) {
    items = [{ type: 'message', role: 'user', content: text }];
  } else if (SystemMessage.isInstance(m)) {
    const role = m.additional_kwargs.__openai_role__ === 'developer' ? 'developer' : 'system';
    items = [{ type: 'message', role, content: text }];
  } else if (AIMessage.isInstance(m)) {
    // A call without an id cannot be an item (call_id is required): it stays in the message's own form.
    const calls = (m.tool_calls ?? [])
      .filter((c) => c.id)
      .map((c) => ({ type: 'function_call', call_id: c.id, name: c.name, arguments: JSON.stringify(c.args) }));
    items = [...(text || calls.length === 0 ? [{ type: 'message', role: 'assistant', content: text }] : []), ...calls];
  } else if (ToolMessage.isInstance(m) && m.tool_call_id) {
    items = [{ type: 'function_call_output', call_id: m.tool_call_id, output: text }];
  } else if (ChatMessage.isInstance(m) && SERVER_ROLES.has(m.role)) {
    items = [{ type: 'message', role: m.role, content: text }];
  } else {
    items = [{ type: 'langchain_message' }];
  }
  for (const part of items.slice(0, -1)) part[PART] = true;
  items[items.length - 1][LANGCHAIN] = m.toDict();
  return items;
}

/** A human message (or a ChatMessage of the user) begins a turn. */
export function beginsTurn(m: BaseMessage): boolean {
  return HumanMessage.isInstance(m) || (ChatMessage.isInstance(m) && m.role === 'user');
}

interface ItemJSON {
  type?: string;
  role?: string;
  content?: unknown;
  call_id?: string;
  callId?: string;
  name?: string;
  arguments?: string;
  output?: unknown;
  [LANGCHAIN]?: StoredMessage;
  [PART]?: boolean;
}

/** The text of an item's content: a string, or its parts' texts one a line (as the server reads it). */
function itemText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (p as { text?: string }).text ?? '').filter(Boolean).join('\n');
  if (content && typeof content === 'object') return itemText([content]);
  return '';
}

/**
 * An item as a LangChain message: the message this history recorded, exactly (from its last
 * item; undefined for its other items); an item another writer recorded (the Agents SDK adapter,
 * beginTurn's own message, a build's note) by its role, call or output; undefined for items
 * without a message's meaning (reasoning, other types).
 */
export function itemMessage(json: string): BaseMessage | undefined {
  const it = JSON.parse(json) as ItemJSON;
  if (it[LANGCHAIN]) return mapStoredMessageToChatMessage(it[LANGCHAIN]);
  if (it[PART]) return undefined;
  const type = it.type ?? 'message';
  const callID = it.call_id ?? it.callId ?? '';
  if (type === 'function_call') {
    let args: Record<string, unknown> = {};
    try {
      args = JSON.parse(it.arguments ?? '{}') as Record<string, unknown>;
    } catch {
      args = { arguments: it.arguments };
    }
    return new AIMessage({ content: '', tool_calls: [{ id: callID, name: it.name ?? '', args, type: 'tool_call' }] });
  }
  if (type === 'function_call_output' || type === 'function_call_result') {
    return new ToolMessage({ content: itemText(it.output), tool_call_id: callID });
  }
  if (type !== 'message') return undefined;
  const content = itemText(it.content);
  switch (it.role) {
    case 'user':
      return new HumanMessage(content);
    case 'assistant':
      return new AIMessage(content);
    case 'system':
      return new SystemMessage(content);
    case 'developer':
      return new SystemMessage({ content, additional_kwargs: { __openai_role__: 'developer' } });
    default:
      return new ChatMessage(content, it.role ?? 'user');
  }
}

/**
 * BaseListChatMessageHistory over one sessiongraph session, as @langchain/core's
 * InMemoryChatMessageHistory behaves: getMessages answers every message added, in order, equal to
 * what was added (ids, tool calls, tool call ids, kwargs, metadata, usage); clear removes them all.
 * Each message is a turn's item (messageItems); a human message begins a turn. getContextMessages
 * answers the MESSAGES build instead: the window the model should see within its limit.
 */
export class SessionGraphChatMessageHistory extends BaseListChatMessageHistory {
  lc_namespace = ['sessiongraph', 'langchain'];

  constructor(
    readonly client: SessionGraphClient,
    readonly sessionID: string,
    /** The MESSAGES build's options for getContextMessages: modelLimit, strategy, keepRecent, tokenizer. */
    readonly options?: ops.ContextOptions,
  ) {
    super();
    this.calls = new PendingModelCalls(client, sessionID, options);
  }

  /** The model calls reported since messages were last added. */
  private readonly calls: PendingModelCalls;

  /**
   * A callback handler (pass it in the chain's or model's callbacks) that records each chat model
   * call against the session's MESSAGES build of the turn its messages are added to: the model's
   * name, the tokens of its usage_metadata, the latency, the finish reason and the cost the price
   * function answers (0 without one). A call that throws is recorded at once, failed, in a turn of
   * its own (docs/adapters.md).
   */
  modelCallHandler(options: { price?: PriceFunction } = {}): BaseCallbackHandler {
    return new ModelCallHandler(this.calls, options.price);
  }

  /** Every message added, oldest first (a failed turn's items left the history). */
  async getMessages(): Promise<BaseMessage[]> {
    const turns = await historyTurns(this.client, this.sessionID);
    return turns.flatMap((t) => t.items.map(itemMessage).filter((m): m is BaseMessage => m !== undefined));
  }

  /**
   * The session's MESSAGES build as messages: its system prompt, then the newest items that fit
   * the options' model limit (the oldest cut first, with a note or the history summary; never a
   * tool call without its output). A message this history recorded comes back exactly (whole when
   * the window cut its text but kept its tool calls); the build's own messages (system prompt,
   * notes) by their role.
   */
  async getContextMessages(): Promise<BaseMessage[]> {
    const { session } = await this.client.request(ops.ContextMessagesDocument, {
      sessionID: this.sessionID,
      ...(this.options ? { options: this.options } : {}),
    });
    if (!session) throw new SessionGraphError([{ message: `session ${this.sessionID} not found (or expired)`, extensions: { code: 'NOT_FOUND' } }]);
    // A window cuts the oldest items first, so a message's last item, which brings it whole, is
    // kept whenever any of its parts is: a message whose text was cut comes back whole.
    return session.context.messages.map((m) => itemMessage(m.json)).filter((m): m is BaseMessage => m !== undefined);
  }

  async addMessage(message: BaseMessage): Promise<void> {
    await this.addMessages([message]);
  }

  async addMessages(messages: BaseMessage[]): Promise<void> {
    const items: NewItem[] = messages.flatMap((m) =>
      messageItems(m).map((item, i) => ({ json: JSON.stringify(item), beginsTurn: i === 0 && beginsTurn(m) })),
    );
    await appendItems(this.client, this.sessionID, items);
    // The calls that produced these messages belong to the turn they are in now.
    await this.calls.flush();
  }

  /** Removes every message (resetConversation: the turns and their items go; the session and its refs stay). */
  async clear(): Promise<void> {
    await this.client.resetConversation({ sessionID: this.sessionID });
  }
}

/** Reports a chat model's calls (started, ended or failed) to a history's pending model calls. */
class ModelCallHandler extends BaseCallbackHandler {
  name = 'sessiongraph_model_calls';
  private readonly started = new Map<string, { at: number; model: string }>();

  constructor(
    private readonly calls: PendingModelCalls,
    private readonly price?: PriceFunction,
  ) {
    // Awaited, so that a failed call is recorded before its error reaches the caller.
    super({ _awaitHandler: true });
  }

  private start(llm: Serialized, runId: string, extraParams?: Record<string, unknown>, metadata?: Record<string, unknown>): void {
    const params = (extraParams?.invocation_params ?? {}) as { model?: string; model_name?: string };
    const model = params.model ?? params.model_name ?? (metadata?.ls_model_name as string | undefined) ?? llm.id.at(-1) ?? 'unknown';
    this.started.set(runId, { at: performance.now(), model });
  }

  private report(runId: string, usage: { input_tokens: number; output_tokens: number }, fields: { model?: string; finishReason?: string; error?: string }): ModelCallReport {
    const started = this.started.get(runId);
    this.started.delete(runId);
    const call = { model: fields.model ?? started?.model ?? 'unknown', inputTokens: usage.input_tokens, outputTokens: usage.output_tokens };
    return {
      ...call,
      cost: this.price ? this.price(call) : 0,
      latencyMs: started ? performance.now() - started.at : 0,
      ...(fields.finishReason ? { finishReason: fields.finishReason } : {}),
      ...(fields.error ? { error: fields.error } : {}),
    };
  }

  override handleChatModelStart(llm: Serialized, _messages: BaseMessage[][], runId: string, _parent?: string, extraParams?: Record<string, unknown>, _tags?: string[], metadata?: Record<string, unknown>): void {
    this.start(llm, runId, extraParams, metadata);
  }

  override handleLLMStart(llm: Serialized, _prompts: string[], runId: string, _parent?: string, extraParams?: Record<string, unknown>, _tags?: string[], metadata?: Record<string, unknown>): void {
    this.start(llm, runId, extraParams, metadata);
  }

  override handleLLMEnd(output: LLMResult, runId: string): void {
    const generation = output.generations[0]?.[0] as ChatGeneration | undefined;
    const message = generation?.message as AIMessage | undefined;
    const tokenUsage = output.llmOutput?.tokenUsage as { promptTokens?: number; completionTokens?: number } | undefined;
    const usage = message?.usage_metadata ?? { input_tokens: tokenUsage?.promptTokens ?? 0, output_tokens: tokenUsage?.completionTokens ?? 0 };
    const meta = (message?.response_metadata ?? {}) as { model_name?: string; finish_reason?: string; stop_reason?: string };
    const finishReason = (generation?.generationInfo?.finish_reason as string | undefined) ?? meta.finish_reason ?? meta.stop_reason;
    this.calls.add(this.report(runId, usage, { model: meta.model_name, finishReason }));
  }

  override async handleLLMError(err: Error, runId: string): Promise<void> {
    await this.calls.failRun(this.report(runId, { input_tokens: 0, output_tokens: 0 }, { error: `${err.name}: ${err.message}` }));
  }
}
