"""LangChain's chat message history side by side with langchain-core's own
InMemoryChatMessageHistory: the same scenarios (several system messages, a
tool call and its ToolMessage, two AI messages in one answer, a failing tool,
an error mid-turn, clear, a long history) run directly and through
RunnableWithMessageHistory with a RunnableLambda in place of the chat model;
what each history returns after every step, and what the model received, are
compared."""

from __future__ import annotations

import uuid
from typing import Any, Callable, Dict, List

import pytest
from langchain_core.chat_history import BaseChatMessageHistory, InMemoryChatMessageHistory
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.runnables.history import RunnableWithMessageHistory

from sessiongraph import ContextOptions
from sessiongraph.langchain import SessionGraphChatMessageHistory

CALL = {"name": "pantry", "args": {"shelf": "top"}, "id": "call_pantry", "type": "tool_call"}


def answers() -> List[Any]:
    """The scripted model's answers, one per call (a list is several messages in one answer)."""
    return [
        AIMessage("", id="run-1", tool_calls=[CALL],
                  usage_metadata={"input_tokens": 12, "output_tokens": 5, "total_tokens": 17},
                  response_metadata={"model_name": "scripted-1", "finish_reason": "tool_calls"}),
        AIMessage("Dal Tadka, with the lentils.", id="run-2", additional_kwargs={"refusal": None}),
        [AIMessage("Kheer."), AIMessage("Or fruit, if you’d rather \"keep it light\".", name="cook")],
        RuntimeError("the model is down"),
        AIMessage("Soup."),
    ]


def scenario(history: BaseChatMessageHistory) -> Dict[str, Any]:
    """One conversation on a history: what it returns after each step, and what the model received."""
    seen: Dict[str, Any] = {}
    script = answers()
    inputs: List[List[BaseMessage]] = []

    def model(messages: List[BaseMessage]) -> Any:
        inputs.append(list(messages))
        answer = script.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    chain = RunnableWithMessageHistory(RunnableLambda(model), lambda _: history)
    config = {"configurable": {"session_id": "s"}}

    def step(name: str, do: Callable[[], Any]) -> None:
        seen[name + " returned"] = do()
        seen[name] = list(history.messages)  # the reference answers its own list, which grows

    step("empty", lambda: None)
    step("system messages", lambda: history.add_messages([
        SystemMessage("Vegetarian household."),
        SystemMessage("Answer in one line.", additional_kwargs={"__openai_role__": "developer"})]))
    step("tool call", lambda: chain.invoke("What can I cook?", config=config))
    step("tool output", lambda: chain.invoke([ToolMessage("top: red lentils, rice", tool_call_id="call_pantry",
                                                          name="pantry", id="tool-1")], config=config))
    step("two answers", lambda: chain.invoke([HumanMessage("And dessert?", id="h-2")], config=config))
    with pytest.raises(RuntimeError, match="the model is down"):
        chain.invoke("And a drink?", config=config)
    seen["model error"] = list(history.messages)
    # The application adds the question itself, then its own code fails before any answer.
    step("question without answer", lambda: history.add_user_message("Still there?"))
    step("failing tool", lambda: history.add_messages([
        AIMessage("", tool_calls=[{"name": "pantry", "args": {"shelf": "x"}, "id": "call_bad", "type": "tool_call"}]),
        ToolMessage("no shelf x", tool_call_id="call_bad", status="error")]))
    step("after the error", lambda: chain.invoke("Soup?", config=config))
    seen["model inputs"] = inputs
    step("clear", history.clear)
    step("add after clear", lambda: history.add_ai_message("Hello again."))
    history.clear()
    # A long history: more turns than one page of reads (100), with every kind of message.
    long: List[BaseMessage] = [SystemMessage("Long.")]
    for i in range(130):
        long += [HumanMessage(f"question {i}"), AIMessage(f"answer {i}", tool_calls=[dict(CALL, id=f"c{i}")]),
                 ToolMessage(f"output {i}", tool_call_id=f"c{i}"), AIMessage(f"done {i}")]
    step("long history", lambda: history.add_messages(long))
    step("one more", lambda: history.add_message(HumanMessage("the last")))
    return seen


def test_langchain_history_side_by_side_with_in_memory(client):
    session = client.open_session("acme", "lc-side-" + uuid.uuid4().hex).session
    reference = scenario(InMemoryChatMessageHistory())
    got = scenario(SessionGraphChatMessageHistory(client, session))
    # The scenario exercised what it says.
    assert [type(m).__name__ for m in reference["two answers"]] == [
        "SystemMessage", "SystemMessage", "HumanMessage", "AIMessage", "ToolMessage", "AIMessage", "HumanMessage",
        "AIMessage", "AIMessage"]
    assert len(reference["model inputs"]) == 5 and reference["model error"] == reference["two answers"]
    assert len(reference["long history"]) == 1 + 130 * 4 and reference["clear"] == []
    assert list(got) == list(reference)
    for step in reference:
        assert got[step] == reference[step], step
        # == on messages leaves out some fields; the dicts have them all.
        if isinstance(reference[step], list) and all(isinstance(m, BaseMessage) for m in reference[step]):
            assert [m.model_dump() for m in got[step]] == [m.model_dump() for m in reference[step]], step

    # What sessiongraph kept of the last conversation: a turn per human message, the items the server reads.
    turns = client.execute("query($s: ID!) { session(id: $s) { turns(first: 2, orderBy: [{field: NUMBER}]) "
                           "{ totalCount edges { node { number } } } } }", {"s": session.id})["session"]["turns"]
    assert turns["totalCount"] == 132  # the system message's turn and one per question
    items = client.turn_items(session, turns["edges"][1]["node"]["number"])
    assert [(i.kind, i.role, i.name, i.call_id, i.content) for i in items] == [
        ("MESSAGE", "user", "", "", "question 0"), ("MESSAGE", "assistant", "", "", "answer 0"),
        ("FUNCTION_CALL", "", "pantry", "c0", ""), ("FUNCTION_CALL_OUTPUT", "", "", "c0", "output 0"),
        ("MESSAGE", "assistant", "", "", "done 0")]


def test_langchain_items_show_in_messages_think_and_reply(client, session):
    """The server reads the history's items: MESSAGES shows roles, calls and outputs."""
    history = SessionGraphChatMessageHistory(client, session)
    history.add_messages([SystemMessage("Vegetarian household."), HumanMessage("What can I cook?"),
                          AIMessage("Let me look.", tool_calls=[CALL]),
                          ToolMessage("top: red lentils", tool_call_id="call_pantry"), AIMessage("Dal Tadka.")])
    build = client.context(session, "MESSAGES")
    assert [(m.role, m.kind, m.content) for m in build.messages] == [
        ("system", "MESSAGE", "Vegetarian household."), ("user", "MESSAGE", "What can I cook?"),
        ("assistant", "MESSAGE", "Let me look."), ("assistant", "FUNCTION_CALL", ""),
        ("tool", "FUNCTION_CALL_OUTPUT", "top: red lentils"), ("assistant", "MESSAGE", "Dal Tadka.")]
    assert history.context_messages() == history.messages
    think = client.context(session, "THINK").text
    assert "pantry" in think and "top: red lentils" in think


def test_context_messages_is_the_window(client, session):
    """context_messages() is the MESSAGES build: over the limit the oldest go, and a message cut
    in its middle (an AI message's text before its call) comes back whole."""
    history = SessionGraphChatMessageHistory(client, session)
    for i in range(4):
        history.add_messages([HumanMessage(f"question {i} " + "words " * 40),
                              AIMessage(f"answer {i} " + "more " * 40, tool_calls=[dict(CALL, id=f"c{i}")]),
                              ToolMessage(f"output {i}", tool_call_id=f"c{i}")])
    options = ContextOptions(model_limit=300, strategy="SLIDING_WINDOW", tokenizer="chars4")
    build = client.context(session, "MESSAGES", options)
    window = SessionGraphChatMessageHistory(client, session, options).context_messages()
    assert window[0].type == "system" and "truncated" in window[0].content
    assert window[-1] == history.messages[-1] and len(window) < len(history.messages)
    for m in window[1:]:
        assert m in history.messages
    assert len(build.messages) >= len(window)
