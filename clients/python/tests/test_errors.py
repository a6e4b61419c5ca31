"""Errors from the real server become SessionGraphError with the server's
extensions.code and field; retryable codes raise RetryableError."""

from __future__ import annotations

import os
import re
import uuid

import httpx
import pytest

import sessiongraph
from sessiongraph import RETRYABLE_CODES, RetryableError, SessionGraphError
from sessiongraph.client import _read

ERRORS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "docs", "errors.md")


def test_bad_input_names_the_field(client, session):
    with client.turn(session, "read") as turn:
        with pytest.raises(SessionGraphError) as err:
            turn.record_read(entity_type="recipe", table="inventory", records=[{"id": str(uuid.uuid4())}])
        assert err.value.code == "BAD_USER_INPUT" and err.value.field and not err.value.retryable
        with pytest.raises(SessionGraphError) as err:
            turn.record_step_result(1001, "READ")
        assert (err.value.code, err.value.field) == ("BAD_USER_INPUT", "step")
        with pytest.raises(SessionGraphError) as err:
            turn.resolve_refs(["recipe_99"])
        assert err.value.code == "REF_NOT_FOUND"
        turn.assistant_message = "-"


def test_turn_codes(client, session):
    with pytest.raises(SessionGraphError) as err:
        client.record_step_result(session, 1, "READ")
    assert err.value.code == "NO_OPEN_TURN"
    with pytest.raises(SessionGraphError) as err:
        with client.turn(session, "outer") as outer:
            with client.turn(session, "inner"):
                pass
    assert err.value.code == "TURN_IN_PROGRESS" and type(err.value) is SessionGraphError
    assert outer.result.status == "FAILED"  # the outer turn failed with the inner's error


def test_keys_and_tenants(url, client, session, other_key):
    with sessiongraph.Client(url, "sg_not-a-key") as bad, pytest.raises(SessionGraphError) as err:
        bad.viewer()
    assert (err.value.code, err.value.status) == ("UNAUTHENTICATED", 401)
    with pytest.raises(SessionGraphError) as err:
        client.open_session("other", "x")
    assert err.value.code == "FORBIDDEN"
    with sessiongraph.Client(url, other_key) as other:
        assert other.viewer().tenant == "other"
        with pytest.raises(SessionGraphError) as err:
            other.begin_turn(session, "hello")
        assert err.value.code == "NOT_FOUND"


def test_unavailable_is_retryable_with_retry_after():
    body = {"data": None, "errors": [{"message": "database unavailable", "extensions": {"code": "UNAVAILABLE"}}]}
    with pytest.raises(RetryableError) as err:
        _read(httpx.Response(503, json=body, headers={"Retry-After": "1"}))
    assert err.value.retryable and err.value.retry_after == 1.0 and err.value.status == 503


def test_retryable_codes_are_the_readmes():
    """docs/errors.md's table: the codes whose retry column says yes."""
    with open(ERRORS, encoding="utf-8") as f:
        table = f.read().split("# Error codes", 1)[1].split("\n\n", 2)[2]
    rows = [r.split(" | ") for r in table.splitlines() if r.startswith("| `")]
    yes = {c for r in rows if r[-1].strip(" |").startswith("yes") for c in re.findall(r"`([A-Z_]+)`", r[0])}
    assert yes == set(RETRYABLE_CODES)
