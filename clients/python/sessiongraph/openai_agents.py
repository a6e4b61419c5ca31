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
from typing import TYPE_CHECKING, Any, List, Optional

import agents.memory  # noqa: F401  (the extra: without it, importing this module fails here)

from . import _chat, ops
from .ops import SessionLike, session_id

if TYPE_CHECKING:
    from agents.items import TResponseInputItem

    from .client import AsyncClient


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

    async def _turns(self) -> List[_chat.ItemTurn]:
        """Every turn but the failed ones (a failed turn's items left the history), oldest first."""
        turns: List[_chat.ItemTurn] = []
        after: Optional[str] = None
        while True:
            page, after = await self.client.run(_chat.turns_page(self.session_id, after))
            turns += [t for t in page if t.status != "FAILED"]
            if after is None:
                return turns

    async def get_items(self, limit: Optional[int] = None) -> List["TResponseInputItem"]:
        """Every item added, oldest first; with limit, the newest limit of them."""
        items: List[Any] = [json.loads(text) for t in await self._turns() for text in t.items]
        if limit is None:
            return items
        return items[-limit:] if limit > 0 else []

    async def add_items(self, items: List["TResponseInputItem"]) -> None:
        """Appends the items to the open turn; a user message ends it (with
        no answer of its own: the assistant's messages are its items) and
        begins the next. Each item is kept as json.dumps(item)."""
        if not items:
            return
        is_open = await self.client.run(_chat.last_status(self.session_id)) == "OPEN"
        for op in _chat.writes(self.session_id, [(json.dumps(i), begins_turn(i)) for i in items], is_open):
            await self.client.run(op)

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
            raise NotImplementedError(_chat.ENDED)
        for op in _chat.pop_ops(self.session_id, last):
            await self.client.run(op)
        return json.loads(last.items[-1])

    async def clear_session(self) -> None:
        """Clears the conversation (resetConversation): the turns and their
        items go; the session, its refs and its system prompt stay."""
        await self.client.run(ops.reset_conversation(self.session_id))
