"""Model calls against the real server: a runtime records the call each
recorded build fed, by receipt or by session and node, and reads the totals."""

from __future__ import annotations

import asyncio
import uuid

import pytest

import sessiongraph
from sessiongraph import SessionGraphError

RECORD_CONTEXT = "mutation($s: ID!) { recordContext(input: {sessionID: $s, node: THINK}) { receipt { id } } }"
TOTALS = "query($s: ID!) { session(id: $s) { modelCallTotals { calls failedCalls inputTokens outputTokens latencyMs cost } } }"


def test_a_model_call_is_kept_with_the_build_it_fed(client, session, url, other_key):
    with client.turn(session, "plan dinner") as turn:
        receipt = client.execute(RECORD_CONTEXT, {"s": session.id})["recordContext"]["receipt"]["id"]
        ok = client.record_model_call("gpt-4o", 1200, 300, 800, 0.1, receipt_id=receipt, finish_reason="stop").model_call
        failed = client.record_model_call("gpt-4o", 1000, 0, 30000, 0.2, session=session, node="THINK",
                                          error="timeout").model_call
        turn.assistant_message = "Dal on Monday"
    assert (ok.receipt_id, ok.turn, ok.node, ok.model, ok.input_tokens, ok.output_tokens, ok.latency_ms, ok.cost,
            ok.finish_reason, ok.error) == (receipt, 1, "THINK", "gpt-4o", 1200, 300, 800, 0.1, "stop", None)
    assert (failed.receipt_id, failed.finish_reason, failed.error) == (receipt, None, "timeout")
    assert client.execute(TOTALS, {"s": session.id})["session"]["modelCallTotals"] == {
        "calls": 2, "failedCalls": 1, "inputTokens": 2200, "outputTokens": 300, "latencyMs": 30800, "cost": 0.3}

    with pytest.raises(SessionGraphError) as bad:
        client.record_model_call("gpt-4o", -1, 0, 0, 0.0, receipt_id=receipt)
    assert (bad.value.code, bad.value.field) == ("BAD_USER_INPUT", "inputTokens")
    with sessiongraph.Client(url, other_key) as other, pytest.raises(SessionGraphError) as elsewhere:
        other.record_model_call("gpt-4o", 1, 1, 1, 0.0, receipt_id=receipt)
    assert elsewhere.value.code == "NOT_FOUND"
    assert client.execute(TOTALS, {"s": session.id})["session"]["modelCallTotals"]["calls"] == 2


def test_the_async_client_records_a_model_call(url, key):
    async def main():
        async with sessiongraph.AsyncClient(url, key) as client:
            session = (await client.open_session("acme", "py-async-" + uuid.uuid4().hex)).session
            await client.begin_turn(session, "hello")
            await client.execute(RECORD_CONTEXT, {"s": session.id})
            return (await client.record_model_call("claude-sonnet-4", 10, 5, 120, 0.0002, session=session,
                                                   node="THINK")).model_call
    call = asyncio.run(asyncio.wait_for(main(), 20))
    assert (call.turn, call.model, call.cost) == (1, "claude-sonnet-4", 0.0002)
