"""Subscriptions over graphql-transport-ws that resume by themselves.

A stream remembers the last event it delivered (its sequence, or for
sessionsChanged its cursor) and, after a dropped connection, a server close
that is not final (1012 Service Restart is what a replica that shuts down
sends: the load balancer then connects the stream to another), a server
`complete` or a retryable error (SUBSCRIBER_TOO_SLOW, UNAVAILABLE, ...),
subscribes again after it: every event arrives once, in order. A subscription started without `after` first
reads where the session (or feed) stands, so even a drop before the first
event loses nothing. Close 4403 (an unknown or revoked key) and the protocol's
other 44xx codes end the stream with SubscriptionClosed; an error answer that
is not retryable (NOT_FOUND, FORBIDDEN, ...) ends it with that error.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from typing import Any, AsyncIterator, Awaitable, Callable, Dict, Generic, Iterator, Optional, Tuple, TypeVar

import websockets
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from .errors import SessionGraphError, SubscriptionClosed, from_errors
from .ops import LAST_SEQUENCE, Op

T = TypeVar("T")

# Close codes after which subscribing again cannot help.
FINAL_CLOSE_CODES = frozenset({4400, 4401, 4403, 4409, 4429, 1008, 1009})

Execute = Callable[[str, Dict[str, Any]], Awaitable[Dict[str, Any]]]


class Reconnect:
    """How a stream reconnects: delays grow from `initial` to `maximum`; after
    `max_failures` connections in a row that delivered nothing and did not
    stay up `healthy` seconds, the stream raises ConnectionError."""

    def __init__(self, initial: float = 0.05, maximum: float = 2.0, max_failures: int = 10,
                 healthy: float = 5.0):
        self.initial, self.maximum, self.max_failures, self.healthy = initial, maximum, max_failures, healthy


async def stream(ws_url: str, key: str, op: Op[T], resume: Optional[str], execute: Execute,
                 reconnect: Optional[Reconnect] = None) -> AsyncIterator[T]:
    """The items of subscription op, resumed across disconnects (see the module doc)."""
    policy = reconnect or Reconnect()
    variables = dict(op.variables)
    field = op.query.split("{", 1)[1].split("(", 1)[0].strip()
    multi = field == "entityChanges"  # several changes may share one event sequence
    if resume and variables.get("after") is None:
        query, qvars, read = position(op, resume)
        variables["after"] = read(await execute(query, qvars))

    last_seq: Optional[int] = variables.get("after") if resume == "sequence" else None
    seen_in_last = 0  # entityChanges delivered with sequence last_seq
    failures = 0
    ids = itertools.count(1)
    while True:
        if resume == "sequence" and last_seq is not None:
            if multi and seen_in_last:
                variables["after"], skip = last_seq - 1, seen_in_last
            else:
                variables["after"], skip = last_seq, 0
        else:
            skip = 0
        started = time.monotonic()
        delivered = False
        ws = None
        try:
            ws = await websockets.connect(ws_url, subprotocols=["graphql-transport-ws"], open_timeout=10,
                                          close_timeout=1, max_size=8 << 20)
            await ws.send(json.dumps({"type": "connection_init", "payload": {"Authorization": f"Bearer {key}"}}))
            acked = False
            while not acked:
                msg = json.loads(await asyncio.wait_for(ws.recv(), 10))
                if msg["type"] == "ping":
                    await ws.send(json.dumps({"type": "pong"}))
                acked = msg["type"] == "connection_ack"
            sub_id = str(next(ids))
            await ws.send(json.dumps({"id": sub_id, "type": "subscribe",
                                      "payload": {"query": op.query, "variables": variables}}))
            async for raw in ws:
                msg = json.loads(raw)
                kind = msg.get("type")
                if kind == "ping":
                    await ws.send(json.dumps({"type": "pong"}))
                    continue
                if msg.get("id") != sub_id:
                    continue  # an operation this stream gave up
                if kind == "next":
                    payload = msg.get("payload") or {}
                    if payload.get("errors"):
                        err = from_errors(payload["errors"])
                        if not err.retryable:
                            raise err
                        await ws.send(json.dumps({"id": sub_id, "type": "complete"}))
                        break  # resume from the last item
                    item = op.result(payload.get("data") or {})
                    if item is None:
                        continue
                    if resume == "sequence":
                        seq = item.sequence  # type: ignore[attr-defined]
                        if last_seq is not None and seq < last_seq:
                            continue
                        if seq == last_seq and skip:
                            skip -= 1
                            continue
                        if seq == last_seq and not multi:
                            continue
                        seen_in_last = seen_in_last + 1 if seq == last_seq else 1
                        last_seq = seq
                    elif resume == "cursor":
                        variables["after"] = item.cursor  # type: ignore[attr-defined]
                    delivered = True
                    failures = 0
                    yield item
                elif kind == "error":
                    err = from_errors(msg.get("payload") or [])
                    if not err.retryable:
                        raise err
                    break
                elif kind == "complete":
                    break  # the server ended it: subscribe again from the last item
        except ConnectionClosed as e:
            code = e.rcvd.code if e.rcvd is not None else None
            if code in FINAL_CLOSE_CODES:
                raise SubscriptionClosed(code, e.rcvd.reason if e.rcvd else "") from None
        except (OSError, asyncio.TimeoutError, InvalidHandshake):
            pass
        except BaseException:  # cancelled, or the consumer stopped: drop the socket now
            if ws is not None:
                ws.transport.abort()
            raise
        if ws is not None:
            try:
                await asyncio.wait_for(ws.close(), 1)
            except (OSError, asyncio.TimeoutError, ConnectionClosed):
                ws.transport.abort()
        if not delivered and time.monotonic() - started < policy.healthy:
            failures += 1
            if failures > policy.max_failures:
                raise ConnectionError(f"subscription {field}: {failures} reconnects in a row failed")
        await asyncio.sleep(min(policy.maximum, policy.initial * (2 ** max(0, failures - 1))))


def position(op: Op[Any], resume: str) -> Tuple[str, Dict[str, Any], Callable[[Dict[str, Any]], Any]]:
    """The query for where a subscription without `after` starts: the
    session's last event sequence, or the sessionsChanged feed's cursor."""
    if resume == "cursor":
        return "query { sessionsChangedCursor }", {}, lambda d: d["sessionsChangedCursor"]

    def last(data: Dict[str, Any]) -> int:
        if data.get("session") is None:
            raise SessionGraphError("session not found", code="NOT_FOUND")
        edges = data["session"]["events"]["edges"]
        return edges[-1]["node"]["sequence"] if edges else 0
    return LAST_SEQUENCE, {"session": op.variables["sessionID"]}, last


class AsyncSubscription(Generic[T]):
    """An async iterator of a subscription's items: `async for ev in sub:`.
    `async with` (or aclose()) ends it."""

    def __init__(self, agen: AsyncIterator[T]):
        self._agen = agen

    def __aiter__(self) -> "AsyncSubscription[T]":
        return self

    async def __anext__(self) -> T:
        return await self._agen.__anext__()

    async def aclose(self) -> None:
        await self._agen.aclose()  # type: ignore[attr-defined]

    async def __aenter__(self) -> "AsyncSubscription[T]":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


_END = object()


class Subscription(Generic[T]):
    """A blocking iterator of a subscription's items: `for ev in sub:`. It runs
    the async stream on an event loop of its own, which reads the socket while
    the caller waits in next(); `with` (or close()) ends it."""

    def __init__(self, make: Callable[[], AsyncIterator[T]]):
        self._loop = asyncio.new_event_loop()
        self._queue: "asyncio.Queue[Any]" = asyncio.Queue()
        self._make = make
        self._task: Optional[asyncio.Task] = None
        self._done = False

    async def _pump(self) -> None:
        agen = self._make()
        try:
            async for item in agen:
                self._queue.put_nowait(item)
            self._queue.put_nowait(_END)
        except asyncio.CancelledError:
            raise
        except BaseException as e:  # handed to the reader
            self._queue.put_nowait(e)
        finally:
            await agen.aclose()  # type: ignore[attr-defined]

    def __iter__(self) -> Iterator[T]:
        return self

    def __next__(self) -> T:
        return self.next(None)

    def next(self, timeout: Optional[float] = None) -> T:
        """The next item; asyncio.TimeoutError (TimeoutError) after timeout seconds."""
        if self._done:
            raise StopIteration
        if self._task is None:
            self._task = self._loop.create_task(self._pump())
        item = self._loop.run_until_complete(asyncio.wait_for(self._queue.get(), timeout))
        if item is _END:
            self.close()
            raise StopIteration
        if isinstance(item, BaseException):
            self.close()
            raise item
        return item

    def close(self) -> None:
        if self._done:
            return
        self._done = True
        tasks = asyncio.all_tasks(self._loop)
        for t in tasks:
            t.cancel()
        if tasks:  # bounded: a task that ignores its cancellation is left behind
            self._loop.run_until_complete(asyncio.wait(tasks, timeout=2))
        self._loop.close()

    def __enter__(self) -> "Subscription[T]":
        return self

    def __del__(self) -> None:  # a loop left without `with` or close()
        try:
            self.close()
        except Exception:
            pass

    def __exit__(self, *exc: Any) -> None:
        self.close()
