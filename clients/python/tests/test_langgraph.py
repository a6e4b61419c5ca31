"""docs/adapters.md's LangGraph example, run as the doc writes it, against
the real server with a scripted model node, and side by side with
InMemoryChatMessageHistory in the history's place."""

from __future__ import annotations

import os
from typing import Any, Dict, List

from langchain_core.chat_history import InMemoryChatMessageHistory
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.runnables import RunnableLambda

import sessiongraph.langchain

HERE = os.path.dirname(os.path.abspath(__file__))
DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "docs", "adapters.md")


def snippet() -> str:
    """The LangGraph section's Python code, from the checkout's docs (the sdist has no docs)."""
    with open(DOC, encoding="utf-8") as f:
        doc = f.read()
    return doc[doc.index("### LangGraph"):].split("```python\n", 1)[1].split("```", 1)[0]


def run_example(sg: Any, session: Any, history_class: Any) -> Dict[str, Any]:
    script = [AIMessage("", tool_calls=[{"name": "pantry", "args": {"shelf": "top"}, "id": "call_1"}]),
              AIMessage("Dal Tadka, with the lentils."), AIMessage("Kheer.")]
    inputs: List[List[BaseMessage]] = []

    def scripted(messages: List[BaseMessage]) -> AIMessage:  # stands in for a chat model with tools bound
        inputs.append(list(messages))
        return script.pop(0)

    scope: Dict[str, Any] = {"sg": sg, "session": session, "model": RunnableLambda(scripted)}
    code = snippet().replace("from sessiongraph.langchain import SessionGraphChatMessageHistory\n", "")
    scope["SessionGraphChatMessageHistory"] = history_class
    exec(code, scope)
    answers = [scope["chat"]("What can I cook?"), scope["chat"]("And dessert?")]
    return {"answers": answers, "messages": scope["history"].messages, "model inputs": inputs}


def test_the_langgraph_example_keeps_the_conversation_in_sessiongraph(client, session):
    assert "from sessiongraph.langchain import SessionGraphChatMessageHistory\n" in snippet()
    got = run_example(client, session, sessiongraph.langchain.SessionGraphChatMessageHistory)
    reference = run_example(None, None, lambda sg, session: InMemoryChatMessageHistory())
    assert got["answers"] == ["Dal Tadka, with the lentils.", "Kheer."]
    assert [m.type for m in got["messages"]] == ["human", "ai", "tool", "ai", "human", "ai"]
    # The second question's model call saw the first turn whole, tool call and output included.
    assert [m.type for m in got["model inputs"][2]] == ["human", "ai", "tool", "ai", "human"]
    # LangGraph gives each message without an id a random one: equal but for those.
    def without_ids(seen: Dict[str, Any]) -> Any:
        strip = lambda ms: [m.model_copy(update={"id": None}) for m in ms]  # noqa: E731
        return seen["answers"], strip(seen["messages"]), [strip(i) for i in seen["model inputs"]]
    assert without_ids(got) == without_ids(reference)
    assert all(m.id for m in got["messages"])  # kept as LangGraph gave them
    items = client.turn_items(session, 1)
    assert [(i.kind, i.name, i.call_id, i.content) for i in items] == [
        ("MESSAGE", "", "", "What can I cook?"), ("FUNCTION_CALL", "pantry", "call_1", ""),
        ("FUNCTION_CALL_OUTPUT", "", "call_1", "top: red lentils, rice"),
        ("MESSAGE", "", "", "Dal Tadka, with the lentils.")]
