"""What the framework adapters share: a chat history written as turns (a
user message begins a turn, the assistant's reply ends it) and read back as
the turns' messages. The adapters (openai_agents, langchain) only translate
their framework's message types to (role, text) pairs and back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import ops
from .errors import SessionGraphError
from .ops import Op

PAGE = 100  # turns per request when reading a whole history

TURNS = """query($id: ID!, $first: Int!, $after: Cursor) {
  session(id: $id) {
    turns(first: $first, after: $after, orderBy: [{field: NUMBER, direction: ASC}]) {
      edges { node { number status userMessage assistantMessage } }
      pageInfo { hasNextPage endCursor }
    }
  }
}"""

LAST_TURN = """query($id: ID!) {
  session(id: $id) {
    turns(last: 1, orderBy: [{field: NUMBER, direction: ASC}]) {
      edges { node { number status userMessage assistantMessage } }
    }
  }
}"""

#: The reason a turn fails when a framework pops its unanswered user message.
POPPED = "the user message was removed from the history (pop)"


@dataclass
class ChatTurn:
    number: int
    status: str  # OPEN, COMPLETED, FAILED
    user: str
    assistant: str

    def messages(self) -> List[Tuple[str, str]]:
        """The turn as (role, text): a failed turn has none (its question got
        no answer and left the history); empty texts are left out."""
        if self.status == "FAILED":
            return []
        out = [("user", self.user)] if self.user else []
        if self.status == "COMPLETED" and self.assistant:
            out.append(("assistant", self.assistant))
        return out


def _turns(data: Dict[str, Any]) -> Tuple[List[ChatTurn], Optional[str]]:
    """A page of turns and the cursor after it (None on the last page)."""
    s = data.get("session")
    if s is None:
        raise SessionGraphError("the session is not found (or expired)", code="NOT_FOUND")
    conn = s["turns"]
    turns = [ChatTurn(n["number"], n["status"], n["userMessage"], n["assistantMessage"])
             for n in (e["node"] for e in conn["edges"] or [])]
    info = conn.get("pageInfo") or {}
    return turns, info.get("endCursor") if info.get("hasNextPage") else None


def turns_page(session_id: str, after: Optional[str]) -> Op[Tuple[List[ChatTurn], Optional[str]]]:
    return Op(TURNS, {"id": session_id, "first": PAGE, "after": after}, _turns)


def last_turn(session_id: str) -> Op[Optional[ChatTurn]]:
    def read(data: Dict[str, Any]) -> Optional[ChatTurn]:
        turns, _ = _turns(data)
        return turns[-1] if turns else None
    return Op(LAST_TURN, {"id": session_id}, read)


def writes(session_id: str, messages: Sequence[Tuple[str, str]], last: Optional[ChatTurn]) -> List[Op[Any]]:
    """The calls that append messages to the session as turns, given its last
    turn: a user message begins a turn (ending an open one with no answer
    first); the assistant messages after it end that turn with their texts
    joined by a blank line; an assistant message with no user message before
    it begins a turn with an empty user message. A system message sets the
    session's system prompt."""
    out: List[Op[Any]] = []
    is_open = last is not None and last.status == "OPEN"
    answer: List[str] = []

    def end() -> None:
        nonlocal is_open, answer
        if is_open:
            out.append(ops.end_turn(session_id, "\n\n".join(answer)))
        is_open, answer = False, []

    for role, text in messages:
        if role == "system":
            out.append(ops.update_session(session_id, system_prompt=text))
        elif role == "user":
            end()
            out.append(ops.begin_turn(session_id, text))
            is_open = True
        else:
            if not is_open:
                out.append(ops.begin_turn(session_id, ""))
                is_open = True
            answer.append(text)
    if answer:
        end()
    return out
