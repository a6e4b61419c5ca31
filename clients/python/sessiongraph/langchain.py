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
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
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
                 options: Union[ContextOptions, Dict[str, Any], None] = None, *,
                 record_model_calls: bool = True, price: Optional[_chat.Price] = None,
                 timer: Optional["ModelCallHandler"] = None):
        self.client = client
        self.session_id = session_id(session)
        #: context_messages()'s options: modelLimit, strategy, keepRecent, tokenizer.
        self.options = options
        #: Whether an AI message with usage_metadata records its model call (see add_messages).
        self.record_model_calls = record_model_calls
        #: (model, input tokens, output tokens) -> US dollars; cost 0 without it.
        self.price = price
        #: The callback handler that timed the calls, for their latency (0 without it).
        self.timer = timer

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
        """Adds the messages in order (a human message begins a turn). An AI
        message that reports its usage (usage_metadata, as chat models fill
        it) also records the model call that produced it: the MESSAGES build
        of the history before it (recordContext, its receipt), then the call
        (recordModelCall) with the model and finish reason its
        response_metadata names, its tokens, the latency the timer measured
        and the cost price gives."""
        if not messages:
            return
        is_open = self.client.run(_chat.last_status(self.session_id)) == "OPEN"
        pending: List[Tuple[str, bool]] = []
        calls: List[Tuple[str, AIMessage, float]] = []
        for m in messages:
            # The timer's latency is taken for every AI message, so that it keeps none it will not need.
            latency = self.timer.latency.pop(m.id, 0.0) if self.timer and isinstance(m, AIMessage) and m.id else 0.0
            if self.record_model_calls and isinstance(m, AIMessage) and m.usage_metadata:
                for op in _chat.writes(self.session_id, pending, is_open):  # the history the model saw
                    self.client.run(op)
                if not is_open and not pending:  # the answer begins the history: its build goes in its turn
                    self.client.run(ops.begin_turn(self.session_id, ""))
                is_open, pending = True, []
                calls.append((self.client.run(_chat.record_context(self.session_id)), m, latency))
            for i, item in enumerate(to_items(m)):
                pending.append((json.dumps(item), i == 0 and begins_turn(m)))
        for op in _chat.writes(self.session_id, pending, is_open):
            self.client.run(op)
        for receipt, m, latency in calls:
            meta, usage = m.response_metadata, m.usage_metadata or {}
            self.client.run(_chat.model_call(
                receipt, meta.get("model_name") or meta.get("model") or "unknown", usage.get("input_tokens", 0),
                usage.get("output_tokens", 0), 0.0, latency, self.price,
                meta.get("finish_reason") or meta.get("stop_reason")))

    def clear(self) -> None:
        """Removes every message (resetConversation: the turns and their
        items go). The session's own system prompt, which this history never
        writes, stays: context_messages() still begins with it."""
        self.client.run(ops.reset_conversation(self.session_id))


class ModelCallHandler(BaseCallbackHandler):
    """A LangChain callback handler for a session's model calls: it times
    each chat model call (the history that adds the call's AI message takes
    the latency from it: pass it as the history's timer) and records a call
    that raised, at once, as a failed call against the session's MESSAGES
    build (its question was never added). Pass it in the run's callbacks:

        calls = ModelCallHandler(sg, session)
        history = SessionGraphChatMessageHistory(sg, session, timer=calls)
        chain.invoke(..., config={"callbacks": [calls], ...})
    """

    def __init__(self, client: Client, session: SessionLike, price: Optional[_chat.Price] = None):
        self.client = client
        self.session_id = session_id(session)
        self.price = price
        #: The calls running: (model, start on the monotonic clock) by run id.
        self.started: Dict[UUID, Tuple[str, float]] = {}
        #: The calls ended and not yet added: seconds by their AI message's id.
        self.latency: Dict[str, float] = {}

    def on_chat_model_start(self, serialized: Dict[str, Any], messages: Any, *, run_id: UUID, **kwargs: Any) -> None:
        params = kwargs.get("invocation_params") or {}
        model = params.get("model_name") or params.get("model") or (serialized or {}).get("name") or "unknown"
        self.started[run_id] = (str(model), time.monotonic())

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        model, start = self.started.pop(run_id, ("", time.monotonic()))
        for generation in (g for gs in response.generations for g in gs):
            message = getattr(generation, "message", None)
            if message is not None and message.id:
                self.latency[message.id] = time.monotonic() - start

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        model, start = self.started.pop(run_id, ("unknown", time.monotonic()))
        receipt = self.client.run(_chat.record_context(self.session_id))
        self.client.run(_chat.model_call(receipt, model, 0, 0, start, time.monotonic(), self.price,
                                         error=f"{type(error).__name__}: {error}"[:10000]))
