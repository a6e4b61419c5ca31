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
import time
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

import agents.memory  # noqa: F401  (the extra: without it, importing this module fails here)
from agents import RunHooks

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


def model_name(agent: Any) -> str:
    """The model an agent calls, as the SDK names it: its model's name, or
    the SDK's default model when the agent names none."""
    m = getattr(agent, "model", None)
    if isinstance(m, str) and m:
        return m
    if m is not None:
        return str(getattr(m, "model", "") or type(m).__name__)
    from agents.models import get_default_model
    return get_default_model()


def finish_reason(output: List[Any]) -> str:
    """The Responses API reports no finish reason: tool_calls when the model
    asked for a tool, else stop."""
    calls = {"function_call", "computer_call", "file_search_call", "web_search_call", "mcp_call",
             "local_shell_call", "code_interpreter_call", "custom_tool_call", "shell_call", "apply_patch_call"}
    return "tool_calls" if any(getattr(o, "type", None) in calls for o in output) else "stop"


class ModelCallHooks(RunHooks):
    """RunHooks that record each model call of a run (record_model_call) in
    the session of memory, a SessionGraphSession:

        hooks = ModelCallHooks(memory)
        result = await Runner.run(agent, "What can I cook?", session=memory, hooks=hooks)

    on_llm_start records the session's MESSAGES build (recordContext): the
    call's receipt, what the window would have fed the model; on_llm_end
    records the call against it: the agent's model, the usage the SDK
    reports (input and output tokens), the latency between the two hooks,
    the finish reason (tool_calls or stop, from the output) and the cost,
    price(model, input_tokens, output_tokens) in US dollars, 0 without a
    price function. The SDK has no hook for a call that raises: pass the
    exception to record_error where Runner.run raised, and the call that
    started and never ended is recorded as failed."""

    def __init__(self, memory: SessionGraphSession, price: Optional[_chat.Price] = None):
        self.memory = memory
        self.price = price
        #: The calls started and not ended: (receipt, model, start on the monotonic clock), per run
        #: (its context) and agent, so that runs sharing these hooks keep their own.
        self.started: Dict[Tuple[int, int], Tuple[str, str, float]] = {}

    async def on_llm_start(self, context: Any, agent: Any, system_prompt: Optional[str], input_items: Any) -> None:
        receipt = await self.memory.client.run(_chat.record_context(self.memory.session_id))
        self.started[(id(context), id(agent))] = (receipt, model_name(agent), time.monotonic())

    async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
        started = self.started.pop((id(context), id(agent)), None)
        if started is None:
            return  # a start these hooks did not see: nothing to attach the call to, and the run goes on
        receipt, model, start = started
        usage = response.usage
        await self.memory.client.run(_chat.model_call(receipt, model, usage.input_tokens, usage.output_tokens, start,
                                                      time.monotonic(), self.price, finish_reason(response.output)))

    async def record_error(self, error: BaseException) -> None:
        """Records the calls started and never ended as failed, with error's text."""
        now = time.monotonic()
        for receipt, model, start in self.started.values():
            await self.memory.client.run(_chat.model_call(receipt, model, 0, 0, start, now, self.price,
                                                          error=f"{type(error).__name__}: {error}"[:10000]))
        self.started.clear()
