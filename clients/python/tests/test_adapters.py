"""The framework adapters against the real packages from PyPI and the real
server: the OpenAI Agents SDK's Session protocol (directly, and through
Runner.run with a scripted model in place of an LLM) and langchain-core's
chat message history (directly, and through RunnableWithMessageHistory)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, List

import pytest
from agents import Agent, Model, ModelResponse, RunConfig, Runner, Usage
from agents.memory import Session
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.runnables.history import RunnableWithMessageHistory
from openai.types.responses import ResponseOutputMessage, ResponseOutputText

from sessiongraph import AsyncClient
from sessiongraph.langchain import SessionGraphChatMessageHistory
from sessiongraph.openai_agents import SessionGraphSession


def turns(client, sid: str) -> List[tuple]:
    data = client.execute("query($s: ID!) { session(id: $s) { turns(first: 50, orderBy: [{field: NUMBER}]) "
                          "{ edges { node { number status userMessage assistantMessage } } } } }", {"s": sid})
    return [(n["number"], n["status"], n["userMessage"], n["assistantMessage"])
            for n in (e["node"] for e in data["session"]["turns"]["edges"])]


def test_agents_session_is_the_sdks_protocol(url, key):
    """The rest of the adapter's behaviour is side by side with the SDK's own session: test_items.py."""
    async def run() -> None:
        async with AsyncClient(url, key) as sg:
            s = await SessionGraphSession.open(sg, "acme", "agents-" + uuid.uuid4().hex)
            assert isinstance(s, Session), "the SDK's runtime-checkable protocol"
            assert await s.get_items() == [] and await s.pop_item() is None
    asyncio.run(run())


class ScriptedModel(Model):
    """Stands in for the LLM: answers the next scripted text and keeps the input it was given."""

    def __init__(self, answers: List[str]):
        self.answers = list(answers)
        self.inputs: List[Any] = []

    async def get_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs,
                           tracing, **kwargs: Any) -> ModelResponse:
        self.inputs.append(input)
        text = ResponseOutputText(type="output_text", text=self.answers.pop(0), annotations=[])
        msg = ResponseOutputMessage(id="msg_" + uuid.uuid4().hex, type="message", role="assistant",
                                    status="completed", content=[text])
        return ModelResponse(output=[msg], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any):
        raise NotImplementedError("these tests do not stream")


def test_agents_runner_keeps_its_memory_in_sessiongraph(url, key, client):
    model = ScriptedModel(["Dal Tadka.", "Kheer."])
    agent = Agent(name="cook", instructions="You plan dinners.", model=model)
    config = RunConfig(tracing_disabled=True)

    async def run() -> str:
        async with AsyncClient(url, key) as sg:
            memory = await SessionGraphSession.open(sg, "acme", "runner-" + uuid.uuid4().hex)
            first = await Runner.run(agent, "What can I cook?", session=memory, run_config=config)
            second = await Runner.run(agent, "And dessert?", session=memory, run_config=config)
            assert (first.final_output, second.final_output) == ("Dal Tadka.", "Kheer.")
            return memory.session_id

    sid = asyncio.run(run())
    # The second run's model saw the first turn, read back from sessiongraph.
    texts = [(i.get("role"), i.get("content") if isinstance(i.get("content"), str) else i["content"][0]["text"])
             for i in model.inputs[1]]
    assert texts == [("user", "What can I cook?"), ("assistant", "Dal Tadka."), ("user", "And dessert?")]
    # A turn per user message, its items exactly what the SDK added; the newest stays open for more.
    assert turns(client, sid) == [(1, "COMPLETED", "", ""), (2, "OPEN", "", "")]
    assert [(i.role, i.content) for i in client.turn_items(sid, 2)] == [("user", "And dessert?"), ("assistant", "Kheer.")]


def test_langchain_history_keeps_every_message(client):
    """The rest is side by side with InMemoryChatMessageHistory: test_langchain_items.py."""
    s = client.open_session("acme", "lc-" + uuid.uuid4().hex, system_prompt="You plan dinners.").session
    h = SessionGraphChatMessageHistory(client, s)
    assert isinstance(h, BaseChatMessageHistory)
    assert h.messages == []
    h.add_messages([SystemMessage("Vegetarian."), HumanMessage("What can I cook?"), AIMessage("Dal Tadka.")])
    h.add_user_message("And dessert?")
    h.add_ai_message("Kheer.")
    want = [("system", "Vegetarian."), ("human", "What can I cook?"), ("ai", "Dal Tadka."),
            ("human", "And dessert?"), ("ai", "Kheer.")]
    assert [(m.type, m.content) for m in h.messages] == want
    assert [(m.type, m.content) for m in asyncio.run(h.aget_messages())] == want
    # A turn per human message (the system message before the first has its own), the newest still open.
    assert turns(client, s.id) == [(1, "COMPLETED", "", ""), (2, "COMPLETED", "", ""), (3, "OPEN", "", "")]
    # The window begins with the session's own system prompt, which the history never writes.
    assert [(m.type, m.content) for m in h.context_messages()] == [("system", "You plan dinners.")] + want

    # clear removes every message; the session's own system prompt stays.
    h.clear()
    assert h.messages == [] and turns(client, s.id) == []
    assert [(m.type, m.content) for m in h.context_messages()] == [("system", "You plan dinners.")]


def test_langchain_runnable_with_message_history(client):
    s = client.open_session("acme", "lc-chain-" + uuid.uuid4().hex).session
    seen: List[List[str]] = []

    def model(messages) -> AIMessage:  # stands in for a chat model
        seen.append([m.content for m in messages])
        return AIMessage(f"echo: {messages[-1].content}")

    chain = RunnableWithMessageHistory(RunnableLambda(model),
                                       lambda session_id: SessionGraphChatMessageHistory(client, session_id))
    config = {"configurable": {"session_id": s.id}}
    assert chain.invoke("hi", config=config).content == "echo: hi"
    assert chain.invoke("again", config=config).content == "echo: again"
    assert seen == [["hi"], ["hi", "echo: hi", "again"]]
    # A turn per human message, the items kept as the messages; the newest turn stays open.
    assert turns(client, s.id) == [(1, "COMPLETED", "", ""), (2, "OPEN", "", "")]
    assert [(i.role, i.content) for i in client.turn_items(s, 1)] == [("user", "hi"), ("assistant", "echo: hi")]


def test_langchain_history_reads_sessions_written_as_turns(client):
    """A session written by the earlier history (or any turn-writing client) reads back as its turns' messages."""
    s = client.open_session("acme", "lc-old-" + uuid.uuid4().hex, system_prompt="You plan dinners.").session
    client.record_exchange(s, "What can I cook?", "Dal Tadka.")
    client.begin_turn(s, "And dessert?")
    client.record_items(s, ['{"type":"function_call","call_id":"c1","name":"pantry","arguments":"{}"}',
                            '{"type":"function_call_output","call_id":"c1","output":"rice"}'])
    client.end_turn(s, "Kheer.")
    h = SessionGraphChatMessageHistory(client, s)
    assert [(m.type, m.content) for m in h.messages] == [
        ("human", "What can I cook?"), ("ai", "Dal Tadka."), ("human", "And dessert?"), ("ai", ""), ("tool", "rice"),
        ("ai", "Kheer.")]
    assert h.messages[3].tool_calls == [{"name": "pantry", "args": {}, "id": "c1", "type": "tool_call"}]
    assert h.messages[4].tool_call_id == "c1"
    assert [(m.type, m.content) for m in h.context_messages()][0] == ("system", "You plan dinners.")
    assert h.context_messages()[1:] == h.messages
