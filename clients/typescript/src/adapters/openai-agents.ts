// Session memory for the OpenAI Agents SDK (@openai/agents-core, an optional peer dependency):
// a sessiongraph session's turns as the SDK's Session interface. Import it from
// '@sessiongraph/client/openai-agents'. docs/adapters.md says what it maps and what it cannot.
import type { AgentInputItem, Session } from '@openai/agents-core';

import type { SessionGraphClient } from '../client.js';
import { allTurns, appendMessages, lastTurn, POPPED, turnMessages, type ChatMessage } from './chat.js';

/** The text of a message item's content: a string, or the parts that carry text. */
function textOf(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const texts = content.flatMap((p) => (p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string' ? [(p as { text: string }).text] : []));
  return texts.length > 0 ? texts.join('') : undefined;
}

/** { role, text } for each message item with text; tool calls, their outputs and reasoning are left out. */
export function toMessages(items: AgentInputItem[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const item of items) {
    const i = item as { type?: string; role?: string; content?: unknown };
    if ((i.type ?? 'message') !== 'message') continue;
    const text = textOf(i.content);
    if (text === undefined) continue;
    if (i.role === 'system') out.push({ role: 'system', text });
    else if (i.role === 'user' || i.role === 'assistant') out.push({ role: i.role, text });
  }
  return out;
}

/** A message as the SDK's input item: a user message, or a completed assistant message. */
export function toItem(m: ChatMessage): AgentInputItem {
  if (m.role === 'assistant') {
    return { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: m.text }] };
  }
  return { type: 'message', role: m.role, content: m.text } as AgentInputItem;
}

/**
 * The Agents SDK's Session over one sessiongraph session: a user message item begins a turn, the
 * assistant message items after it end the turn, and getItems answers each turn as a user and an
 * assistant item. Tool calls, their outputs and reasoning items are not kept.
 */
export class SessionGraphSession implements Session {
  constructor(
    readonly client: SessionGraphClient,
    /** The sessiongraph session's id. */
    readonly sessionID: string,
  ) {}

  /** Opens (or reopens) the session of (tenant, externalKey). */
  static async open(client: SessionGraphClient, tenant: string, externalKey: string): Promise<SessionGraphSession> {
    const { session } = await client.openSession({ tenant, externalKey });
    return new SessionGraphSession(client, session.id);
  }

  async getSessionId(): Promise<string> {
    return this.sessionID;
  }

  /** The turns' messages, oldest first; with limit, the newest limit of them. */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    const items = (await allTurns(this.client, this.sessionID)).flatMap(turnMessages).map(toItem);
    if (limit === undefined) return items;
    return limit > 0 ? items.slice(-limit) : [];
  }

  async addItems(items: AgentInputItem[]): Promise<void> {
    await appendMessages(this.client, this.sessionID, toMessages(items));
  }

  /**
   * Removes the newest item when it is an unanswered user message (its open turn fails); undefined
   * when there is no item. A completed turn's answer cannot be taken back: that throws
   * (clearSession starts over).
   */
  async popItem(): Promise<AgentInputItem | undefined> {
    const last = await lastTurn(this.client, this.sessionID);
    if (!last) return undefined;
    if (last.status === 'OPEN') {
      await this.client.failTurn({ sessionID: this.sessionID, reason: POPPED });
      return toItem({ role: 'user', text: last.userMessage });
    }
    if ((await this.getItems(1)).length === 0) return undefined;
    throw new Error(
      'sessiongraph keeps completed turns: popItem only removes an unanswered user message; clearSession starts the conversation over',
    );
  }

  /** Clears the conversation (resetConversation): the turns go; the session, its refs and its system prompt stay. */
  async clearSession(): Promise<void> {
    await this.client.resetConversation({ sessionID: this.sessionID });
  }
}
