"""LangChain chat message history (`pip install 'sessiongraph[langchain]'`):
a sessiongraph session as langchain-core's BaseChatMessageHistory.

    from sessiongraph import Client
    from sessiongraph.langchain import SessionGraphChatMessageHistory

    sg = Client()  # SG_URL, SG_API_KEY
    history = SessionGraphChatMessageHistory(sg, session)
    history.add_messages([HumanMessage("What can I cook?"), AIMessage("Dal Tadka.")])
    history.messages  # the MESSAGES build: system prompt, a truncation note or summary, the turns

messages is the session's MESSAGES context build, so it is what the model
should see: over the budget, the oldest turns are cut (SLIDING_WINDOW, with a
note) or replaced by the history summary (SUMMARY), as `options` says.
add_messages writes turns (a human message begins one, the AI's answer ends
it); clear resets the conversation. docs/adapters.md lists what it cannot
express.
"""

from __future__ import annotations

from typing import Any, Dict, List, Sequence, Tuple, Union

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from . import _chat, ops
from .client import Client
from .ops import SessionLike, session_id
from .types import ContextOptions

_ROLES = {"human": "user", "ai": "assistant", "system": "system"}


def to_messages(messages: Sequence[BaseMessage]) -> List[Tuple[str, str]]:
    """(role, text) for human, AI and system messages with text; tool messages
    and an AI message's tool calls are left out."""
    out: List[Tuple[str, str]] = []
    for m in messages:
        role = _ROLES.get(m.type)
        text = m.text if isinstance(m.text, str) else m.text()  # a property in langchain-core 1.x
        if role and text:
            out.append((role, text))
    return out


def to_langchain(role: str, content: str) -> BaseMessage:
    if role == "user":
        return HumanMessage(content=content)
    if role == "assistant":
        return AIMessage(content=content)
    return SystemMessage(content=content)


class SessionGraphChatMessageHistory(BaseChatMessageHistory):
    """BaseChatMessageHistory over one sessiongraph session (see the module's doc)."""

    def __init__(self, client: Client, session: SessionLike,
                 options: Union[ContextOptions, Dict[str, Any], None] = None):
        self.client = client
        self.session_id = session_id(session)
        #: The MESSAGES build's options: modelLimit, strategy, keepRecent, tokenizer.
        self.options = options

    @property
    def messages(self) -> List[BaseMessage]:  # type: ignore[override]
        build = self.client.context(self.session_id, "MESSAGES", self.options)
        return [to_langchain(m.role, m.content) for m in build.messages]

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        pairs = to_messages(messages)
        if not pairs:
            return
        last = self.client.run(_chat.last_turn(self.session_id))
        for op in _chat.writes(self.session_id, pairs, last):
            self.client.run(op)

    def clear(self) -> None:
        self.client.run(ops.reset_conversation(self.session_id))
