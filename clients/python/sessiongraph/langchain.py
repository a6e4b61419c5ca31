"""LangChain chat message history (`pip install 'sessiongraph[langchain]'`):
a sessiongraph session as langchain-core's BaseChatMessageHistory.

    from sessiongraph import Client
    from sessiongraph.langchain import SessionGraphChatMessageHistory

    sg = Client()  # SG_URL, SG_API_KEY
    history = SessionGraphChatMessageHistory(sg, session)
    history.add_messages([HumanMessage("What can I cook?"), AIMessage("Dal Tadka.")])
    history.messages            # every message added, in order, equal to what was added
    history.context_messages()  # the MESSAGES build: what fits the model's limit

It behaves as langchain-core's InMemoryChatMessageHistory: `messages` is
every message added, each equal (==) to what was added, and clear() empties
it. Each message is kept as one or more turn items (recordItems) the server
reads (a message of its role, an AI message's tool calls as function_call
items, a ToolMessage as a function_call_output), the last of them carrying
LangChain's own dict of the message (message_to_dict), from which it is read
back. A human message begins a turn. docs/adapters.md has the mapping.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import (AIMessage, BaseMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage,
                                     message_to_dict, messages_from_dict)

from . import _chat, ops
from .client import Client
from .ops import SessionLike, session_id
from .types import ContextOptions

#: The key of the item that carries LangChain's dict of the message (its last item).
LANGCHAIN = "langchain"
#: The key marking a message's other items (its text before its tool calls, the calls before the last).
PART = "langchain_part"

_ROLES = {"system", "developer", "user", "assistant", "tool"}


def _text(m: BaseMessage) -> str:
    text = m.text
    return text if isinstance(text, str) else text()  # a property in langchain-core 1.x, a method before


def to_items(m: BaseMessage) -> List[Dict[str, Any]]:
    """The items a message is kept as, in the Responses API's shapes the
    server reads; the last carries the message's own dict."""
    text = _text(m)
    items: List[Dict[str, Any]]
    if isinstance(m, HumanMessage):
        items = [{"type": "message", "role": "user", "content": text}]
    elif isinstance(m, SystemMessage):
        role = "developer" if m.additional_kwargs.get("__openai_role__") == "developer" else "system"
        items = [{"type": "message", "role": role, "content": text}]
    elif isinstance(m, AIMessage):
        # A call without an id cannot be an item (call_id is required): it stays in the message's dict.
        calls = [{"type": "function_call", "call_id": c["id"], "name": c["name"], "arguments": json.dumps(c["args"])}
                 for c in m.tool_calls if c.get("id")]
        items = [{"type": "message", "role": "assistant", "content": text}] if text or not calls else []
        items += calls
    elif isinstance(m, ToolMessage) and m.tool_call_id:
        items = [{"type": "function_call_output", "call_id": m.tool_call_id, "output": text}]
    elif isinstance(m, (ChatMessage, ToolMessage)) and getattr(m, "role", "tool") in _ROLES:
        items = [{"type": "message", "role": getattr(m, "role", "tool"), "content": text}]
    else:  # a FunctionMessage, a custom role: kept whole, as OTHER
        items = [{"type": "langchain_message"}]
    for part in items[:-1]:
        part[PART] = True
    items[-1][LANGCHAIN] = message_to_dict(m)
    return items


def begins_turn(m: BaseMessage) -> bool:
    return isinstance(m, HumanMessage) or (isinstance(m, ChatMessage) and m.role == "user")


def _content(v: Any) -> str:
    """A content or output field's text: a string, or its parts' texts one a line."""
    if isinstance(v, str):
        return v
    if isinstance(v, dict):
        v = [v]
    return "\n".join(p["text"] for p in v or [] if isinstance(p, dict) and isinstance(p.get("text"), str))


def from_item(kind: str, role: str, content: str, name: str, call_id: str, arguments: str) -> BaseMessage:
    """A message for an item not written by this history (by another client,
    a turn's own messages, a build's note or summary)."""
    if kind == "FUNCTION_CALL":
        try:
            args = json.loads(arguments or "{}")
        except ValueError:
            args = {}
        return AIMessage(content="", tool_calls=[{"name": name, "args": args if isinstance(args, dict) else {},
                                                  "id": call_id, "type": "tool_call"}])
    if kind == "FUNCTION_CALL_OUTPUT":
        return ToolMessage(content=content, tool_call_id=call_id)
    if role == "user":
        return HumanMessage(content=content)
    if role == "assistant":
        return AIMessage(content=content)
    if role == "system":
        return SystemMessage(content=content)
    if role == "developer":
        return SystemMessage(content=content, additional_kwargs={"__openai_role__": "developer"})
    return ChatMessage(role=role or kind.lower(), content=content)


_KINDS = {"message": "MESSAGE", "function_call": "FUNCTION_CALL", "function_call_output": "FUNCTION_CALL_OUTPUT",
          "function_call_result": "FUNCTION_CALL_OUTPUT"}


def read_item(text: str, fallback: Optional[Tuple[str, str, str, str, str, str]] = None) -> Optional[BaseMessage]:
    """The message an item's JSON stands for; None for a message's other
    items (its last item brings it whole). fallback: the fields the server
    parsed (kind, role, content, name, call_id, arguments), when known."""
    item = json.loads(text) if text else {}
    if LANGCHAIN in item:
        return messages_from_dict([item[LANGCHAIN]])[0]
    if item.get(PART):
        return None
    if fallback is not None:
        return from_item(*fallback)
    kind = _KINDS.get(item.get("type", "message"), "OTHER")
    return from_item(kind, item.get("role", ""), _content(item.get("content", item.get("output"))),
                     item.get("name", ""), item.get("call_id", item.get("callId", "")), item.get("arguments", ""))


class SessionGraphChatMessageHistory(BaseChatMessageHistory):
    """BaseChatMessageHistory over one sessiongraph session (see the module's doc)."""

    def __init__(self, client: Client, session: SessionLike,
                 options: Union[ContextOptions, Dict[str, Any], None] = None):
        self.client = client
        self.session_id = session_id(session)
        #: context_messages()'s options: modelLimit, strategy, keepRecent, tokenizer.
        self.options = options

    @property
    def messages(self) -> List[BaseMessage]:  # type: ignore[override]
        """Every message added since the last clear, in order, as it was added."""
        out: List[BaseMessage] = []
        after: Optional[str] = None
        while True:
            page, after = self.client.run(_chat.turns_page(self.session_id, after))
            for turn in page:
                if turn.status != "FAILED":
                    out += [m for m in map(read_item, turn.items) if m is not None]
            if after is None:
                return out

    def context_messages(self, options: Union[ContextOptions, Dict[str, Any], None] = None) -> List[BaseMessage]:
        """The session's MESSAGES build as LangChain messages: the session's
        system prompt, then the newest messages that fit 80% of the model
        limit (the oldest cut first, with a truncation note or the history
        summary, as options say; self.options when not given). A message cut
        in the middle (an AI message's text before its tool calls) comes back
        whole."""
        build = self.client.context(self.session_id, "MESSAGES", options or self.options)
        out = [read_item(m.json, (m.kind, m.role, m.content, m.name, m.call_id, m.arguments)) for m in build.messages]
        return [m for m in out if m is not None]

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        if not messages:
            return
        items: List[Tuple[str, bool]] = []
        for m in messages:
            for i, item in enumerate(to_items(m)):
                items.append((json.dumps(item), i == 0 and begins_turn(m)))
        is_open = self.client.run(_chat.last_status(self.session_id)) == "OPEN"
        for op in _chat.writes(self.session_id, items, is_open):
            self.client.run(op)

    def clear(self) -> None:
        """Removes every message (resetConversation: the turns and their
        items go). The session's own system prompt, which this history never
        writes, stays: context_messages() still begins with it."""
        self.client.run(ops.reset_conversation(self.session_id))
