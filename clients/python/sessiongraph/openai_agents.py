"""Session memory for the OpenAI Agents SDK (`pip install 'sessiongraph[openai-agents]'`):
a sessiongraph session's turns as the SDK's `Session` protocol.

    from agents import Agent, Runner
    from sessiongraph import AsyncClient
    from sessiongraph.openai_agents import SessionGraphSession

    sg = AsyncClient()  # SG_URL, SG_API_KEY
    memory = await SessionGraphSession.open(sg, tenant="acme", external_key="chat-1")
    result = await Runner.run(agent, "What can I cook tonight?", session=memory)

Items map to turns: a user message begins a turn, the assistant's messages
after it end the turn (joined by a blank line), and get_items answers each
turn as a user item and an assistant item. Tool calls, their outputs,
reasoning and other item types have no place in a turn and are not kept;
docs/adapters.md says what else the mapping cannot express.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

import agents.memory  # noqa: F401  (the extra: without it, importing this module fails here)

from . import _chat, ops
from .ops import SessionLike, session_id

if TYPE_CHECKING:
    from agents.items import TResponseInputItem

    from .client import AsyncClient


def _text(content: Any) -> Optional[str]:
    """The text of a message item's content: a string, or parts with text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [p.get("text") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        return "".join(texts) if texts else None
    return None


def to_messages(items: Sequence[Any]) -> List[Tuple[str, str]]:
    """(role, text) for each message item with text; every other item (tool
    calls and outputs, reasoning) is left out."""
    out: List[Tuple[str, str]] = []
    for item in items:
        if not isinstance(item, dict) or item.get("type", "message") != "message":
            continue
        role, text = item.get("role"), _text(item.get("content"))
        if text is None:
            continue
        if role in ("system", "developer"):
            out.append(("system", text))
        elif role in ("user", "assistant"):
            out.append((role, text))
    return out


def to_item(role: str, text: str) -> Dict[str, Any]:
    """A message as the SDK's input item (an easy input message)."""
    return {"role": role, "content": text}


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

    async def _turns(self) -> List[_chat.ChatTurn]:
        turns: List[_chat.ChatTurn] = []
        after: Optional[str] = None
        while True:
            page, after = await self.client.run(_chat.turns_page(self.session_id, after))
            turns += page
            if after is None:
                return turns

    async def get_items(self, limit: Optional[int] = None) -> List["TResponseInputItem"]:
        """The turns' messages, oldest first; with limit, the newest limit of them."""
        items: List[Any] = [to_item(role, text) for t in await self._turns() for role, text in t.messages()]
        if limit is None:
            return items
        return items[-limit:] if limit > 0 else []

    async def add_items(self, items: List["TResponseInputItem"]) -> None:
        """Appends the message items as turns (see _chat.writes)."""
        messages = to_messages(items)
        if not messages:
            return
        last = await self.client.run(_chat.last_turn(self.session_id))
        for op in _chat.writes(self.session_id, messages, last):
            await self.client.run(op)

    async def pop_item(self) -> Optional["TResponseInputItem"]:
        """Removes the newest item when it is an unanswered user message (its
        open turn fails); None when there is no item. A completed turn's answer
        cannot be taken back: that raises NotImplementedError (clear_session
        starts over)."""
        last = await self.client.run(_chat.last_turn(self.session_id))
        if last is None:
            return None
        if last.status == "OPEN":
            await self.client.run(ops.fail_turn(self.session_id, _chat.POPPED))
            return to_item("user", last.user)  # type: ignore[return-value]
        items = await self.get_items(1)
        if not items:
            return None
        raise NotImplementedError("sessiongraph keeps completed turns: pop_item only removes an unanswered user "
                                  "message; clear_session starts the conversation over")

    async def clear_session(self) -> None:
        """Clears the conversation (resetConversation): the turns go, the
        session, its refs and its system prompt stay."""
        await self.client.run(ops.reset_conversation(self.session_id))
