"""What the framework adapters share: a conversation kept as turns' items
(docs/api.md, "Items"). A message that begins a turn (a user's) ends the
open turn and begins the next; every other item goes into the open turn,
beginning one when none is open. The newest turn stays open until the next
user message, so that a framework's pop can still take back its items.
Reading answers every item of every turn but a failed one, oldest first.

Each piece is an Op, so the same steps run on Client (LangChain) and
AsyncClient (the Agents SDK)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from . import ops
from .errors import SessionGraphError
from .ops import Op

PAGE = 100  # turns per request when reading a whole history

#: Items per recordItems call, the server's limit.
BATCH = 100

#: The reason a turn fails when a framework pops its unanswered user message.
POPPED = "the user message was removed from the history (pop)"

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


def _turns(data: Dict[str, Any]) -> Dict[str, Any]:
    if data.get("session") is None:
        raise SessionGraphError("the session is not found (or expired)", code="NOT_FOUND")
    return data["session"]["turns"]


def turns_page(session: str, after: Optional[str]) -> Op[Tuple[List[ItemTurn], Optional[str]]]:
    """A page of turns with their items' JSON, and the cursor after it (None on the last page)."""
    def read(data: Dict[str, Any]) -> Tuple[List[ItemTurn], Optional[str]]:
        conn = _turns(data)
        turns = [ItemTurn(n["number"], n["status"], [i["json"] for i in n["items"]])
                 for n in (e["node"] for e in conn["edges"] or [])]
        info = conn.get("pageInfo") or {}
        return turns, info.get("endCursor") if info.get("hasNextPage") else None
    return Op(TURNS, {"id": session, "first": PAGE, "after": after}, read)


def last_status(session: str) -> Op[Optional[str]]:
    """The newest turn's status (OPEN, COMPLETED, FAILED), None with no turn."""
    def read(data: Dict[str, Any]) -> Optional[str]:
        edges = _turns(data)["edges"] or []
        return edges[0]["node"]["status"] if edges else None
    return Op(LAST_TURN, {"id": session}, read)


def record(session: str, texts: Sequence[str]) -> List[Op[Any]]:
    """recordItems calls for texts, BATCH at a time."""
    return [ops.record_items(session, list(texts[i:i + BATCH])) for i in range(0, len(texts), BATCH)]


def writes(session: str, items: Sequence[Tuple[str, bool]], is_open: bool) -> List[Op[Any]]:
    """The calls that append items, each (json, begins_turn), given whether
    the session's newest turn is open: an item that begins a turn ends the
    open one (with no answer of its own: the answers are its items) and
    begins the next; with no open turn, the first item begins one. The
    turns' own messages stay empty: the items keep the messages exactly."""
    out: List[Op[Any]] = []
    batch: List[str] = []
    for text, begins in items:
        if begins or not is_open:
            out += record(session, batch)
            batch = []
            if is_open:
                out.append(ops.end_turn(session, ""))
            out.append(ops.begin_turn(session, ""))
            is_open = True
        batch.append(text)
    return out + record(session, batch)


def pop_ops(session: str, last: ItemTurn) -> List[Op[Any]]:
    """The calls that take back the newest item of the open turn last: it
    fails (its items leave the history) and its other items are recorded
    again, in order, in a new turn."""
    out: List[Op[Any]] = [ops.fail_turn(session, POPPED)]
    if len(last.items) > 1:
        out.append(ops.begin_turn(session, ""))
        out += record(session, last.items[:-1])
    return out


#: What pop raises when the newest item is an ended turn's.
ENDED = ("sessiongraph keeps ended turns: a pop only removes the items since the last user message; "
         "clearing the history starts the conversation over")

RECORD_CONTEXT = """mutation($id: ID!, $node: ContextNode!) {
  recordContext(input: {sessionID: $id, node: $node}) { receipt { id } }
}"""


def record_context(session: str, node: str = "MESSAGES") -> Op[str]:
    """Records the node's build as a receipt of the current turn; answers the receipt's id."""
    return Op(RECORD_CONTEXT, {"id": session, "node": node}, lambda d: d["recordContext"]["receipt"]["id"])


#: A price function: (model, input tokens, output tokens) -> US dollars.
Price = Callable[[str, int, int], float]


def model_call(receipt: str, model: str, input_tokens: int, output_tokens: int, started: float, ended: float,
               price: Optional[Price], finish_reason: Optional[str] = None,
               error: Optional[str] = None) -> Op[Any]:
    """recordModelCall for a call the adapters saw: latency from the monotonic
    clock's start and end, cost from price (0 without one)."""
    cost = price(model, input_tokens, output_tokens) if price else 0.0
    return ops.record_model_call(model or "unknown", input_tokens, output_tokens,
                                 max(0, round((ended - started) * 1000)), cost, receipt_id=receipt,
                                 finish_reason=finish_reason or None, error=error)
