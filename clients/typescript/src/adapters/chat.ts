// What the framework adapters share: a chat history written as turns (a user message begins a
// turn, the assistant's reply ends it) and read back as the turns' messages. The adapters only
// translate their framework's message types to { role, text } and back.
import type { SessionGraphClient } from '../client.js';
import { SessionGraphError } from '../errors.js';
import * as ops from '../generated/graphql.js';

export type ChatRole = 'system' | 'user' | 'assistant';
export interface ChatMessage {
  role: ChatRole;
  text: string;
}
export type ChatTurn = ops.ChatTurnFieldsFragment;

/** Turns per request when reading a whole history. */
const PAGE = 100;

/** The reason a turn fails when a framework pops its unanswered user message. */
export const POPPED = 'the user message was removed from the history (pop)';

/**
 * A turn as chat messages: a failed turn has none (its question got no answer and left the
 * history); empty texts are left out.
 */
export function turnMessages(t: ChatTurn): ChatMessage[] {
  if (t.status === 'FAILED') return [];
  const out: ChatMessage[] = t.userMessage ? [{ role: 'user', text: t.userMessage }] : [];
  if (t.status === 'COMPLETED' && t.assistantMessage) out.push({ role: 'assistant', text: t.assistantMessage });
  return out;
}

function notFound(id: string): SessionGraphError {
  return new SessionGraphError([{ message: `session ${id} not found (or expired)`, extensions: { code: 'NOT_FOUND' } }]);
}

/** Every turn of a session, oldest first. */
export async function allTurns(client: SessionGraphClient, id: string): Promise<ChatTurn[]> {
  const out: ChatTurn[] = [];
  let after: string | null = null;
  for (;;) {
    const { session }: ops.ChatTurnsQuery = await client.request(ops.ChatTurnsDocument, { id, first: PAGE, after });
    if (!session) throw notFound(id);
    for (const e of session.turns.edges ?? []) if (e?.node) out.push(e.node);
    if (!session.turns.pageInfo.hasNextPage) return out;
    after = session.turns.pageInfo.endCursor ?? null;
  }
}

/** A session's newest turn, or null before its first. */
export async function lastTurn(client: SessionGraphClient, id: string): Promise<ChatTurn | null> {
  const { session } = await client.request(ops.LastTurnDocument, { id });
  if (!session) throw notFound(id);
  return session.turns.edges?.[0]?.node ?? null;
}

/**
 * Appends messages to a session as turns: a user message begins a turn (ending an open one with
 * no answer first); the assistant messages after it end that turn with their texts joined by a
 * blank line; an assistant message with no user message before it begins a turn with an empty
 * user message. A system message sets the session's system prompt. The Python client's
 * sessiongraph._chat.writes does the same.
 */
export async function appendMessages(client: SessionGraphClient, sessionID: string, messages: ChatMessage[]): Promise<void> {
  if (messages.length === 0) return;
  const last = await lastTurn(client, sessionID);
  let open = last?.status === 'OPEN';
  let answer: string[] = [];
  const end = async () => {
    if (open) await client.endTurn({ sessionID, assistantMessage: answer.join('\n\n') });
    open = false;
    answer = [];
  };
  for (const m of messages) {
    if (m.role === 'system') {
      await client.updateSession({ id: sessionID, systemPrompt: m.text });
    } else if (m.role === 'user') {
      await end();
      await client.beginTurn({ sessionID, userMessage: m.text });
      open = true;
    } else {
      if (!open) {
        await client.beginTurn({ sessionID, userMessage: '' });
        open = true;
      }
      answer.push(m.text);
    }
  }
  if (answer.length > 0) await end();
}
