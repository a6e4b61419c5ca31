// What the framework adapters share: a history kept as turns' items (docs/api.md, "Items"). A
// message that begins a turn (the user's) ends the open turn and begins the next; every other item
// joins the open turn. Each item is its JSON text, kept byte for byte, and read back as it was.
import type { SessionGraphClient } from '../client.js';
import { SessionGraphError } from '../errors.js';
import * as ops from '../generated/graphql.js';

/** Turns per request when reading a whole history; items per recordItems call (the server's limit). */
const PAGE = 100;
const BATCH = 100;

/** The reason a turn fails when a framework pops one of its items. */
export const POPPED = 'the user message was removed from the history (pop)';

/** A turn of a history: its status and each item's JSON, as it was recorded. */
export interface ItemTurn {
  status: ops.TurnStatus;
  items: string[];
}

/** An item to append: its JSON text, and whether it begins a turn. */
export interface NewItem {
  json: string;
  beginsTurn: boolean;
}

function notFound(id: string): SessionGraphError {
  return new SessionGraphError([{ message: `session ${id} not found (or expired)`, extensions: { code: 'NOT_FOUND' } }]);
}

/** Every turn of the session but the failed ones (a failed turn's items left the history), oldest first. */
export async function historyTurns(client: SessionGraphClient, id: string): Promise<ItemTurn[]> {
  const out: ItemTurn[] = [];
  let after: string | null = null;
  for (;;) {
    const { session }: ops.ItemTurnsQuery = await client.request(ops.ItemTurnsDocument, { id, first: PAGE, after });
    if (!session) throw notFound(id);
    for (const e of session.turns.edges ?? []) {
      if (e?.node && e.node.status !== 'FAILED') out.push({ status: e.node.status, items: e.node.items.map((i) => i.json) });
    }
    if (!session.turns.pageInfo.hasNextPage) return out;
    after = session.turns.pageInfo.endCursor ?? null;
  }
}

/** Records items into the open turn, a hundred per call. */
export async function recordAll(client: SessionGraphClient, sessionID: string, items: string[]): Promise<void> {
  for (let i = 0; i < items.length; i += BATCH) {
    await client.recordItems({ sessionID, items: items.slice(i, i + BATCH) });
  }
}

/**
 * Appends items to the session's history: an item that begins a turn ends the open one (with no
 * answer of its own: the items keep the messages) and begins the next, with an empty user message
 * (the item keeps the user's exact JSON); with no open turn, one is begun first.
 */
export async function appendItems(client: SessionGraphClient, sessionID: string, items: NewItem[]): Promise<void> {
  if (items.length === 0) return;
  const { session } = await client.request(ops.LastTurnDocument, { id: sessionID });
  if (!session) throw notFound(sessionID);
  let open = session.turns.edges?.[0]?.node?.status === 'OPEN';
  let batch: string[] = [];
  for (const item of items) {
    if (item.beginsTurn || !open) {
      await recordAll(client, sessionID, batch);
      batch = [];
      if (open) await client.endTurn({ sessionID, assistantMessage: '' });
      await client.beginTurn({ sessionID, userMessage: '' });
      open = true;
    }
    batch.push(item.json);
  }
  await recordAll(client, sessionID, batch);
}
