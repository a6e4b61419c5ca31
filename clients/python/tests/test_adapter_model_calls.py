"""The adapters record the model calls their framework reports, against the
real server: the Agents SDK through ModelCallHooks (RunHooks), LangChain
through the history, from the AI messages' usage_metadata. The turn's trace
then shows each call with the MESSAGES build it was fed."""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any, List

import pytest
from agents import Agent, Model, ModelResponse, RunConfig, Runner, Usage, function_tool
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables.history import RunnableWithMessageHistory
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from sessiongraph import AsyncClient
from sessiongraph.langchain import ModelCallHandler, SessionGraphChatMessageHistory
from sessiongraph.openai_agents import ModelCallHooks, SessionGraphSession

TRACE = """query($s: ID!) { session(id: $s) {
  modelCallTotals { calls failedCalls inputTokens outputTokens cost }
  turns(first: 10, orderBy: [{field: NUMBER}]) { edges { node { number
    receipts { node modelCalls { model inputTokens outputTokens latencyMs cost finishReason error } } } } }
} }"""


def calls(client: Any, sid: str) -> List[tuple]:
    """Each turn's receipts' model calls: (turn, node, model, in, out, cost, finish reason, error)."""
    data = client.execute(TRACE, {"s": sid})["session"]
    return [(t["number"], r["node"], c["model"], c["inputTokens"], c["outputTokens"], c["cost"], c["finishReason"],
             c["error"])
            for t in (e["node"] for e in data["turns"]["edges"]) for r in t["receipts"] for c in r["modelCalls"]]


class UsageModel(Model):
    """A scripted model that reports usage, as a provider's does; an exception in the script is raised."""

    def __init__(self, script: List[Any]):
        self.script = script

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        await asyncio.sleep(0.02)  # a latency to measure
        step = self.script.pop(0)
        if isinstance(step, Exception):
            raise step
        output, tokens_in, tokens_out = step
        return ModelResponse(output=output, response_id=None,
                             usage=Usage(requests=1, input_tokens=tokens_in, output_tokens=tokens_out,
                                         total_tokens=tokens_in + tokens_out))

    def stream_response(self, *args: Any, **kwargs: Any):
        raise NotImplementedError("these tests do not stream")


@function_tool
def pantry(shelf: str) -> str:
    """What is on a pantry shelf."""
    return f"{shelf}: red lentils"


def answer(text: str) -> ResponseOutputMessage:
    return ResponseOutputMessage(id=f"msg_{uuid.uuid4().hex}", type="message", role="assistant", status="completed",
                                 content=[ResponseOutputText(type="output_text", text=text, annotations=[])])


def test_agents_hooks_record_each_model_call(url, key, client):
    script: List[Any] = [
        ([ResponseFunctionToolCall(type="function_call", id="fc_1", call_id="call_1", name="pantry",
                                   arguments='{"shelf": "top"}', status="completed")], 120, 8),
        ([answer("Dal Tadka.")], 150, 5),
        RuntimeError("the model is down"),
    ]
    model = UsageModel(script)
    model.model = "scripted-4o"  # the name a provider's model carries
    agent = Agent(name="cook", instructions="You plan dinners.", model=model, tools=[pantry])
    config = RunConfig(tracing_disabled=True)

    def price(name: str, tokens_in: int, tokens_out: int) -> float:
        return tokens_in * 1e-6 + tokens_out * 4e-6

    async def run() -> str:
        async with AsyncClient(url, key) as sg:
            memory = await SessionGraphSession.open(sg, "acme", "hooks-" + uuid.uuid4().hex)
            hooks = ModelCallHooks(memory, price=price)
            result = await Runner.run(agent, "What can I cook?", session=memory, hooks=hooks, run_config=config)
            assert result.final_output == "Dal Tadka."
            with pytest.raises(RuntimeError):
                try:
                    await Runner.run(agent, "And dessert?", session=memory, hooks=hooks, run_config=config)
                except RuntimeError as e:
                    await hooks.record_error(e)
                    raise
            assert hooks.started == {}
            return memory.session_id

    sid = asyncio.run(run())
    assert calls(client, sid) == [
        (1, "MESSAGES", "scripted-4o", 120, 8, 0.000152, "tool_calls", None),
        (1, "MESSAGES", "scripted-4o", 150, 5, 0.00017, "stop", None),
        (2, "MESSAGES", "scripted-4o", 0, 0, 0.0, None, "RuntimeError: the model is down"),
    ]
    data = client.execute(TRACE, {"s": sid})["session"]
    assert data["modelCallTotals"] == {"calls": 3, "failedCalls": 1, "inputTokens": 270, "outputTokens": 13,
                                       "cost": 0.000322}
    latencies = [c["latencyMs"] for t in data["turns"]["edges"] for r in t["node"]["receipts"] for c in r["modelCalls"]]
    assert all(ms >= 20 for ms in latencies), latencies


def test_agents_hooks_without_a_price_record_no_cost(url, key, client):
    model = UsageModel([([answer("Hello.")], 10, 2)])
    agent = Agent(name="cook", model=model)

    async def run() -> str:
        async with AsyncClient(url, key) as sg:
            memory = await SessionGraphSession.open(sg, "acme", "hooks-" + uuid.uuid4().hex)
            await Runner.run(agent, "Hi", session=memory, hooks=ModelCallHooks(memory),
                             run_config=RunConfig(tracing_disabled=True))
            return memory.session_id

    sid = asyncio.run(run())
    assert calls(client, sid) == [(1, "MESSAGES", "UsageModel", 10, 2, 0.0, "stop", None)]


DOWN = AIMessage("the model is down")


class SlowScriptedChatModel(FakeMessagesListChatModel):
    """langchain-core's own scripted chat model, with a latency to measure; DOWN in the script raises."""

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
        time.sleep(0.02)
        if self.responses[self.i % len(self.responses)] is DOWN:
            self.i += 1
            raise RuntimeError("the model is down")
        return super()._generate(messages, stop, run_manager, **kwargs)


def test_langchain_history_records_the_calls_its_messages_report(client, session):
    usage = lambda i, o: {"input_tokens": i, "output_tokens": o, "total_tokens": i + o}  # noqa: E731
    model = SlowScriptedChatModel(responses=[
        AIMessage("Dal Tadka.", usage_metadata=usage(40, 4),
                  response_metadata={"model_name": "gpt-4o-mini", "finish_reason": "stop"}),
        DOWN,
        AIMessage("Kheer.", usage_metadata=usage(60, 2), response_metadata={"model_name": "gpt-4o-mini"}),
        AIMessage("No usage reported."),
    ])
    handler = ModelCallHandler(client, session, price=lambda m, i, o: 0.001)
    chain = RunnableWithMessageHistory(
        model, lambda sid: SessionGraphChatMessageHistory(client, sid, timer=handler, price=lambda m, i, o: 0.002))
    config = {"configurable": {"session_id": session.id}, "callbacks": [handler]}
    assert chain.invoke("What can I cook?", config=config).content == "Dal Tadka."
    with pytest.raises(RuntimeError, match="the model is down"):
        chain.invoke("And dessert?", config=config)
    assert chain.invoke("And dessert?", config=config).content == "Kheer."
    assert chain.invoke("Thanks", config=config).content == "No usage reported."
    # A call per AI message that reported usage, each on the MESSAGES build of the history before it;
    # the failed call on the build of the turn then open (its question was never added).
    assert calls(client, session.id) == [
        (1, "MESSAGES", "gpt-4o-mini", 40, 4, 0.002, "stop", None),
        (1, "MESSAGES", "SlowScriptedChatModel", 0, 0, 0.001, None, "RuntimeError: the model is down"),
        (2, "MESSAGES", "gpt-4o-mini", 60, 2, 0.002, None, None),
    ]
    data = client.execute(TRACE, {"s": session.id})["session"]
    latencies = [c["latencyMs"] for t in data["turns"]["edges"] for r in t["node"]["receipts"] for c in r["modelCalls"]]
    assert all(ms >= 20 for ms in latencies), latencies
    assert handler.started == {} and handler.latency == {}
    # The first call's build held the question, not the answer.
    receipt = client.execute("query($s: ID!) { session(id: $s) { turns(first: 1, orderBy: [{field: NUMBER}]) "
                             "{ edges { node { receipts { text } } } } } }", {"s": session.id})
    text = receipt["session"]["turns"]["edges"][0]["node"]["receipts"][0]["text"]
    assert "What can I cook?" in text and "Dal Tadka." not in text


def test_an_answer_that_begins_the_history_has_its_call_in_its_turn(client, session):
    history = SessionGraphChatMessageHistory(client, session)
    history.add_messages([AIMessage("Hello! What shall we cook?", usage_metadata={
        "input_tokens": 7, "output_tokens": 6, "total_tokens": 13}, response_metadata={"model_name": "m"})])
    assert calls(client, session.id) == [(1, "MESSAGES", "m", 7, 6, 0.0, None, None)]
    assert [i.content for i in client.turn_items(session, 1)] == ["Hello! What shall we cook?"]


def test_langchain_history_can_leave_model_calls_out(client, session):
    history = SessionGraphChatMessageHistory(client, session, record_model_calls=False)
    history.add_messages([HumanMessage("hi"), AIMessage("hello", usage_metadata={
        "input_tokens": 1, "output_tokens": 1, "total_tokens": 2})])
    assert calls(client, session.id) == []
