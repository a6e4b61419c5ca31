// Session memory for the OpenAI Agents SDK (@openai/agents-core, an optional peer dependency):
// a sessiongraph session's turns as the SDK's Session interface. Import it from
// '@sessiongraph/client/openai-agents'. docs/adapters.md says what it maps and what it cannot.
import type { AgentInputItem, Session } from '@openai/agents-core';

import type { SessionGraphClient } from '../client.js';
import { SessionGraphError } from '../errors.js';
import * as ops from '../generated/graphql.js';
import { POPPED } from './chat.js';

/** Turns per request when reading a whole history; items per recordItems call (the server's limit). */
const PAGE = 100;
const BATCH = 100;

interface ItemTurn {
  status: ops.TurnStatus;
  /** Each item's JSON, as it was recorded. */
  items: string[];
}

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
  ) {}

  /** Opens (or reopens) the session of (tenant, externalKey). */
  static async open(client: SessionGraphClient, tenant: string, externalKey: string): Promise<SessionGraphSession> {
    const { session } = await client.openSession({ tenant, externalKey });
    return new SessionGraphSession(client, session.id);
  }

  async getSessionId(): Promise<string> {
    return this.sessionID;
  }

  /** Every turn but the failed ones (a failed turn's items left the history), oldest first. */
  private async turns(): Promise<ItemTurn[]> {
    const out: ItemTurn[] = [];
    let after: string | null = null;
    for (;;) {
      const { session }: ops.ItemTurnsQuery = await this.client.request(ops.ItemTurnsDocument, { id: this.sessionID, first: PAGE, after });
      if (!session) throw new SessionGraphError([{ message: `session ${this.sessionID} not found (or expired)`, extensions: { code: 'NOT_FOUND' } }]);
      for (const e of session.turns.edges ?? []) {
        if (e?.node && e.node.status !== 'FAILED') out.push({ status: e.node.status, items: e.node.items.map((i) => i.json) });
      }
      if (!session.turns.pageInfo.hasNextPage) return out;
      after = session.turns.pageInfo.endCursor ?? null;
    }
  }

  /** Every item added, oldest first; with limit, the newest limit of them. */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    const items = (await this.turns()).flatMap((t) => t.items.map((json) => JSON.parse(json) as AgentInputItem));
    if (limit === undefined) return items;
    return limit > 0 ? items.slice(-limit) : [];
  }

  private async record(items: string[]): Promise<void> {
    for (let i = 0; i < items.length; i += BATCH) {
      await this.client.recordItems({ sessionID: this.sessionID, items: items.slice(i, i + BATCH) });
    }
  }

  /**
   * Appends the items to the open turn; a user message ends it (with no answer of its own: the
   * assistant's messages are its items) and begins the next. Each item is kept as JSON.stringify(item).
   */
  async addItems(items: AgentInputItem[]): Promise<void> {
    if (items.length === 0) return;
    const { session } = await this.client.request(ops.LastTurnDocument, { id: this.sessionID });
    let open = session?.turns.edges?.[0]?.node?.status === 'OPEN';
    let batch: string[] = [];
    for (const item of items) {
      if (beginsTurn(item) || !open) {
        await this.record(batch);
        batch = [];
        if (open) await this.client.endTurn({ sessionID: this.sessionID, assistantMessage: '' });
        // The turn's own message stays empty: the item keeps the user's exact JSON.
        await this.client.beginTurn({ sessionID: this.sessionID, userMessage: '' });
        open = true;
      }
      batch.push(JSON.stringify(item));
    }
    await this.record(batch);
  }

  /**
   * Removes and answers the newest item; undefined when there is none. The items since the last user
   * message (that message included) are the open turn's: popping one fails that turn and records the
   * others again in a new one. An item of an ended turn cannot be taken back: that throws
   * (clearSession starts over).
   */
  async popItem(): Promise<AgentInputItem | undefined> {
    const last = (await this.turns()).filter((t) => t.items.length > 0).at(-1);
    if (!last) return undefined;
    if (last.status !== 'OPEN') {
      throw new Error(
        'sessiongraph keeps ended turns: popItem only removes the items since the last user message; clearSession starts the conversation over',
      );
    }
    await this.client.failTurn({ sessionID: this.sessionID, reason: POPPED });
    if (last.items.length > 1) {
      await this.client.beginTurn({ sessionID: this.sessionID, userMessage: '' });
      await this.record(last.items.slice(0, -1));
    }
    return JSON.parse(last.items.at(-1)!) as AgentInputItem;
  }

  /** Clears the conversation (resetConversation): the turns and their items go; the session, its refs and its system prompt stay. */
  async clearSession(): Promise<void> {
    await this.client.resetConversation({ sessionID: this.sessionID });
  }
}
