"""Session memory for the OpenAI Agents SDK (`pip install 'sessiongraph[openai-agents]'`):
a sessiongraph session's turns as the SDK's `Session` protocol.

    from agents import Agent, Runner
    from sessiongraph import AsyncClient
    from sessiongraph.openai_agents import SessionGraphSession

    sg = AsyncClient()  # SG_URL, SG_API_KEY
    memory = await SessionGraphSession.open(sg, tenant="acme", external_key="chat-1")
    result = await Runner.run(agent, "What can I cook tonight?", session=memory)

Every item the SDK adds is kept as a turn's item (recordItems), as the JSON
text the SDK's own SQLiteSession stores (json.dumps(item)): messages of every
role, tool calls and their outputs, reasoning. A user message begins a turn;
the items after it, up to the next user message, are that turn's. get_items
answers them all in order, as SQLiteSession does; docs/adapters.md says what
pop_item cannot reach.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

import agents.memory  # noqa: F401  (the extra: without it, importing this module fails here)

from . import ops
from ._chat import PAGE, POPPED
from .errors import SessionGraphError
from .ops import Op, SessionLike, session_id

if TYPE_CHECKING:
    from agents.items import TResponseInputItem

    from .client import AsyncClient

#: Items per recordItems call, the server's limit.
BATCH = 100

TURNS = """query($id: ID!, $first: Int!, $after: Cursor) {
  session(id: $id) {
    turns(first: $first, after: $after, orderBy: [{field: NUMBER, direction: ASC}]) {
      edges { node { number status items { json } } }
      pageInfo { hasNextPage endCursor }
    }
  }
}"""

LAST_TURN = """query($id: ID!) {
  session(id: $id) { turns(last: 1, orderBy: [{field: NUMBER, direction: ASC}]) { edges { node { number status } } } }
}"""


@dataclass
class ItemTurn:
    number: int
    status: str  # OPEN, COMPLETED, FAILED
    items: List[str]  # each item's JSON, as it was recorded


def _session(data: Dict[str, Any]) -> Dict[str, Any]:
    if data.get("session") is None:
        raise SessionGraphError("the session is not found (or expired)", code="NOT_FOUND")
    return data["session"]["turns"]


def _page(session: str, after: Optional[str]) -> Op[Tuple[List[ItemTurn], Optional[str]]]:
    def read(data: Dict[str, Any]) -> Tuple[List[ItemTurn], Optional[str]]:
        conn = _session(data)
        turns = [ItemTurn(n["number"], n["status"], [i["json"] for i in n["items"]])
                 for n in (e["node"] for e in conn["edges"] or [])]
        info = conn.get("pageInfo") or {}
        return turns, info.get("endCursor") if info.get("hasNextPage") else None
    return Op(TURNS, {"id": session, "first": PAGE, "after": after}, read)


def _last_status(session: str) -> Op[Optional[str]]:
    def read(data: Dict[str, Any]) -> Optional[str]:
        edges = _session(data)["edges"] or []
        return edges[0]["node"]["status"] if edges else None
    return Op(LAST_TURN, {"id": session}, read)


def begins_turn(item: Any) -> bool:
    """A user message (an easy input message or a message item) begins a turn."""
    return isinstance(item, dict) and item.get("role") == "user" and item.get("type", "message") == "message"


class SessionGraphSession:
    """The Agents SDK's Session protocol over one sessiongraph session (see the
    module's doc). session_id is the sessiongraph session's id."""

    session_settings = None

    def __init__(self, client: "AsyncClient", session: SessionLike):
        self.client = client
        self.session_id = session_id(session)

    @classmethod
    async def open(cls, client: "AsyncClient", tenant: str, external_key: str, **kwargs: Any) -> "SessionGraphSession":
        """Opens (or reopens) the session of (tenant, external_key); kwargs go to open_session."""
        return cls(client, (await client.open_session(tenant, external_key, **kwargs)).session)

    async def _turns(self) -> List[ItemTurn]:
        """Every turn but the failed ones (a failed turn's items left the history), oldest first."""
        turns: List[ItemTurn] = []
        after: Optional[str] = None
        while True:
            page, after = await self.client.run(_page(self.session_id, after))
            turns += [t for t in page if t.status != "FAILED"]
            if after is None:
                return turns

    async def get_items(self, limit: Optional[int] = None) -> List["TResponseInputItem"]:
        """Every item added, oldest first; with limit, the newest limit of them."""
        items: List[Any] = [json.loads(text) for t in await self._turns() for text in t.items]
        if limit is None:
            return items
        return items[-limit:] if limit > 0 else []

    async def _record(self, texts: List[str]) -> None:
        for i in range(0, len(texts), BATCH):
            await self.client.record_items(self.session_id, texts[i:i + BATCH])

    async def add_items(self, items: List["TResponseInputItem"]) -> None:
        """Appends the items to the open turn; a user message ends it (with
        no answer of its own: the assistant's messages are its items) and
        begins the next. Each item is kept as json.dumps(item)."""
        if not items:
            return
        is_open = await self.client.run(_last_status(self.session_id)) == "OPEN"
        batch: List[str] = []
        for item in items:
            if begins_turn(item) or not is_open:
                await self._record(batch)
                batch = []
                if is_open:
                    await self.client.end_turn(self.session_id, "")
                # The turn's own message stays empty: the item keeps the user's exact JSON.
                await self.client.begin_turn(self.session_id, "")
                is_open = True
            batch.append(json.dumps(item))
        await self._record(batch)

    async def pop_item(self) -> Optional["TResponseInputItem"]:
        """Removes and returns the newest item; None when there is none. The
        items since the last user message (that message included) are the open
        turn's: popping one fails that turn and records the others again in
        a new one. An item of an ended turn cannot be taken back: that raises
        NotImplementedError (clear_session starts over)."""
        turns = [t for t in await self._turns() if t.items]
        if not turns:
            return None
        last = turns[-1]
        if last.status != "OPEN":
            raise NotImplementedError("sessiongraph keeps ended turns: pop_item only removes the items since the "
                                      "last user message; clear_session starts the conversation over")
        await self.client.fail_turn(self.session_id, POPPED)
        if len(last.items) > 1:
            await self.client.begin_turn(self.session_id, "")
            await self._record(last.items[:-1])
        return json.loads(last.items[-1])

    async def clear_session(self) -> None:
        """Clears the conversation (resetConversation): the turns and their
        items go; the session, its refs and its system prompt stay."""
        await self.client.run(ops.reset_conversation(self.session_id))
