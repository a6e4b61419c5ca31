"""Client (blocking) and AsyncClient: the same operations, over httpx for
queries and mutations and websockets for subscriptions."""

from __future__ import annotations

import functools
import os
import warnings
from typing import Any, AsyncIterator, Awaitable, Callable, Dict, Optional, TypeVar

import httpx

try:
    from typing import Concatenate, ParamSpec
except ImportError:  # pragma: no cover - Python < 3.10
    from typing_extensions import Concatenate, ParamSpec  # type: ignore

from . import ops
from .errors import SessionGraphError, configuration_error, from_errors
from .live import AsyncSubscription, Reconnect, Subscription, position, stream
from .ops import Op, SessionLike, session_id
from .types import ExecutionSummaryInput, JSONMap, Turn

P = ParamSpec("P")
T = TypeVar("T")

MAX_REASON = 4000  # a failed turn keeps at most this much of the exception's text


def _endpoint(url: str) -> str:
    url = url.rstrip("/")
    return url if url.endswith("/graphql") else url + "/graphql"


def _read(resp: httpx.Response) -> Dict[str, Any]:
    """The data of a GraphQL response, or the exception its errors make."""
    if resp.status_code < 500 and resp.headers.get("content-type", "").startswith("text/html"):
        raise configuration_error(str(resp.url), resp.status_code)
    try:
        body = resp.json()
    except ValueError:
        code = "UNAVAILABLE" if resp.status_code >= 500 else None
        raise (from_errors([{"message": f"HTTP {resp.status_code}: {resp.text[:200]}",
                             "extensions": {"code": code}}], status=resp.status_code)) from None
    if body.get("errors"):
        ra = resp.headers.get("retry-after")
        raise from_errors(body["errors"], status=resp.status_code,
                          retry_after=float(ra) if ra and ra.isdigit() else None)
    if resp.status_code >= 400 or not isinstance(body.get("data"), dict):
        raise SessionGraphError(f"HTTP {resp.status_code} without data", status=resp.status_code)
    return body["data"]


# --------------------------------------------------------- method factories

def _sync(f: Callable[P, Op[T]]) -> Callable[Concatenate["Client", P], T]:
    @functools.wraps(f)
    def method(self: "Client", *a: P.args, **kw: P.kwargs) -> T:
        return self.run(f(*a, **kw))
    return method


def _async(f: Callable[P, Op[T]]) -> Callable[Concatenate["AsyncClient", P], Awaitable[T]]:
    @functools.wraps(f)
    async def method(self: "AsyncClient", *a: P.args, **kw: P.kwargs) -> T:
        return await self.run(f(*a, **kw))
    return method


def _in_turn(f: Callable[Concatenate[SessionLike, P], Op[T]]) -> Callable[Concatenate["TurnScope", P], T]:
    @functools.wraps(f)
    def method(self: "TurnScope", *a: P.args, **kw: P.kwargs) -> T:
        return self._client.run(f(self.session_id, *a, **kw))
    return method


def _in_async_turn(f: Callable[Concatenate[SessionLike, P], Op[T]]) -> Callable[Concatenate["AsyncTurnScope", P], Awaitable[T]]:
    @functools.wraps(f)
    async def method(self: "AsyncTurnScope", *a: P.args, **kw: P.kwargs) -> T:
        return await self._client.run(f(self.session_id, *a, **kw))
    return method


def _sub(f: Callable[P, Op[T]]) -> Callable[Concatenate["Client", P], Subscription[T]]:
    @functools.wraps(f)
    def method(self: "Client", *a: P.args, **kw: P.kwargs) -> Subscription[T]:
        op, resume = f(*a, **kw), f.spec.resume  # type: ignore[attr-defined]
        if resume and op.variables.get("after") is None:  # new events from now on
            query, variables, read = position(op, resume)
            op.variables["after"] = read(self.execute(query, variables))
        return Subscription(lambda: self._stream(op, resume))
    return method


def _async_sub(f: Callable[P, Op[T]]) -> Callable[Concatenate["AsyncClient", P], AsyncSubscription[T]]:
    @functools.wraps(f)
    def method(self: "AsyncClient", *a: P.args, **kw: P.kwargs) -> AsyncSubscription[T]:
        return AsyncSubscription(self._stream(f(*a, **kw), f.spec.resume))  # type: ignore[attr-defined]
    return method


# ---------------------------------------------------------------- turn scopes

class _TurnBase:
    def __init__(self, client: Any, session: SessionLike, user_message: str):
        self._client = client
        self.session_id = session_id(session)
        self.user_message = user_message
        #: Set these before the block ends: endTurn sends them.
        self.assistant_message = ""
        self.summary: Optional[ExecutionSummaryInput | JSONMap] = None
        #: The turn as beginTurn returned it.
        self.turn: Optional[Turn] = None
        #: The turn as endTurn or failTurn returned it, once the block is left.
        self.result: Optional[Turn] = None

    @property
    def number(self) -> int:
        assert self.turn is not None, "the turn has not begun"
        return self.turn.number

    @staticmethod
    def _reason(exc: BaseException) -> str:
        text = str(exc) or type(exc).__name__
        return text[:MAX_REASON]


class TurnScope(_TurnBase):
    """`with client.turn(session, message) as turn:` begins a turn; leaving the
    block ends it with turn.assistant_message and turn.summary; an exception
    fails it with the exception's text as the reason, and propagates."""

    def __enter__(self) -> "TurnScope":
        self.turn = self._client.begin_turn(self.session_id, self.user_message).turn
        return self

    def __exit__(self, et: Any, exc: Optional[BaseException], tb: Any) -> bool:
        if exc is None:
            self.result = self._client.end_turn(self.session_id, self.assistant_message, summary=self.summary).turn
            return False
        try:
            self.result = self._client.fail_turn(self.session_id, self._reason(exc)).turn
        except Exception as e:  # keep the original exception; say why the turn stays open
            exc.add_note(f"failTurn failed too: {e}")
        return False

    record_read = _in_turn(ops.record_read)
    record_updated = _in_turn(ops.record_updated)
    record_generated = _in_turn(ops.record_generated)
    record_created = _in_turn(ops.record_created)
    record_deleted = _in_turn(ops.record_deleted)
    record_user_action = _in_turn(ops.record_user_action)
    record_step_result = _in_turn(ops.record_step_result)
    record_items = _in_turn(ops.record_items)
    update_turn = _in_turn(ops.update_turn)
    mention_entity = _in_turn(ops.mention_entity)
    update_artifact = _in_turn(ops.update_artifact)
    clear_artifact = _in_turn(ops.clear_artifact)
    apply_enrichment = _in_turn(ops.apply_enrichment)
    retain_ref = _in_turn(ops.retain_ref)
    release_ref = _in_turn(ops.release_ref)
    resolve_refs = _in_turn(ops.resolve_refs)
    translate_filters = _in_turn(ops.translate_filters)
    translate_payload = _in_turn(ops.translate_payload)
    read_refs = _in_turn(ops.read_refs)
    active_entities = _in_turn(ops.active_entities)
    context = _in_turn(ops.context)


class AsyncTurnScope(_TurnBase):
    """`async with client.turn(session, message) as turn:`, as TurnScope."""

    async def __aenter__(self) -> "AsyncTurnScope":
        self.turn = (await self._client.begin_turn(self.session_id, self.user_message)).turn
        return self

    async def __aexit__(self, et: Any, exc: Optional[BaseException], tb: Any) -> bool:
        if exc is None:
            self.result = (await self._client.end_turn(self.session_id, self.assistant_message,
                                                       summary=self.summary)).turn
            return False
        try:
            self.result = (await self._client.fail_turn(self.session_id, self._reason(exc))).turn
        except Exception as e:
            exc.add_note(f"failTurn failed too: {e}")
        return False

    record_read = _in_async_turn(ops.record_read)
    record_updated = _in_async_turn(ops.record_updated)
    record_generated = _in_async_turn(ops.record_generated)
    record_created = _in_async_turn(ops.record_created)
    record_deleted = _in_async_turn(ops.record_deleted)
    record_user_action = _in_async_turn(ops.record_user_action)
    record_step_result = _in_async_turn(ops.record_step_result)
    record_items = _in_async_turn(ops.record_items)
    update_turn = _in_async_turn(ops.update_turn)
    mention_entity = _in_async_turn(ops.mention_entity)
    update_artifact = _in_async_turn(ops.update_artifact)
    clear_artifact = _in_async_turn(ops.clear_artifact)
    apply_enrichment = _in_async_turn(ops.apply_enrichment)
    retain_ref = _in_async_turn(ops.retain_ref)
    release_ref = _in_async_turn(ops.release_ref)
    resolve_refs = _in_async_turn(ops.resolve_refs)
    translate_filters = _in_async_turn(ops.translate_filters)
    translate_payload = _in_async_turn(ops.translate_payload)
    read_refs = _in_async_turn(ops.read_refs)
    active_entities = _in_async_turn(ops.active_entities)
    context = _in_async_turn(ops.context)


# -------------------------------------------------------------------- clients

#: The environment variables a client reads when it is given no URL or key.
URL_ENV, KEY_ENV, OLD_KEY_ENV = "SG_URL", "SG_API_KEY", "SG_KEY"


def _from_env(url: Optional[str], key: Optional[str]) -> tuple:
    """url and key, or else SG_URL and SG_API_KEY (SG_KEY, deprecated, still read)."""
    url = url or os.environ.get(URL_ENV)
    if not url:
        raise configuration_error(None, None, f"no URL: pass one or set {URL_ENV}")
    if not key and os.environ.get(KEY_ENV):
        key = os.environ[KEY_ENV]
    elif not key and os.environ.get(OLD_KEY_ENV):
        warnings.warn(f"{OLD_KEY_ENV} is deprecated: set {KEY_ENV}", DeprecationWarning, stacklevel=3)
        key = os.environ[OLD_KEY_ENV]
    if not key:
        raise configuration_error(url, None, f"no API key: pass one or set {KEY_ENV}")
    return url, key


class _Base:
    def __init__(self, url: Optional[str], key: Optional[str], reconnect: Optional[Reconnect] = None):
        url, key = _from_env(url, key)
        self.url = _endpoint(url)
        self.ws_url = "ws" + self.url[4:] if self.url.startswith("http") else self.url
        self.key = key
        self.reconnect = reconnect or Reconnect()

    def _stream(self, op: Op[T], resume: Optional[str]) -> AsyncIterator[T]:
        async def execute(query: str, variables: Dict[str, Any]) -> Dict[str, Any]:
            async with httpx.AsyncClient(headers={"authorization": f"Bearer {self.key}"}, timeout=30) as http:
                return _read(await http.post(self.url, json={"query": query, "variables": variables}))
        return stream(self.ws_url, self.key, op, resume, execute, self.reconnect)


class Client(_Base):
    """A blocking client. `Client(url, key)`, or `Client()` to read SG_URL and
    SG_API_KEY; `with Client(...) as c:` closes it."""

    def __init__(self, url: Optional[str] = None, key: Optional[str] = None, *, timeout: float = 30.0,
                 reconnect: Optional[Reconnect] = None):
        super().__init__(url, key, reconnect)
        self._http = httpx.Client(headers={"authorization": f"Bearer {self.key}"}, timeout=timeout)

    def execute(self, query: str, variables: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        """Any GraphQL document; returns its data or raises SessionGraphError."""
        return _read(self._http.post(self.url, json={"query": query, "variables": variables or {}}))

    def run(self, op: Op[T]) -> T:
        return op.result(self.execute(op.query, op.variables))

    def turn(self, session: SessionLike, user_message: str) -> TurnScope:
        """A turn as a context manager (see TurnScope)."""
        return TurnScope(self, session, user_message)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    open_session = _sync(ops.open_session)
    update_session = _sync(ops.update_session)
    reset_conversation = _sync(ops.reset_conversation)
    session = _sync(ops.session)
    session_by_key = _sync(ops.session_by_key)
    viewer = _sync(ops.viewer)
    sessions_changed_cursor = _sync(ops.sessions_changed_cursor)
    begin_turn = _sync(ops.begin_turn)
    end_turn = _sync(ops.end_turn)
    record_exchange = _sync(ops.record_exchange)
    record_items = _sync(ops.record_items)
    turn_items = _sync(ops.turn_items)
    fail_turn = _sync(ops.fail_turn)
    update_turn = _sync(ops.update_turn)
    record_step_result = _sync(ops.record_step_result)
    record_model_call = _sync(ops.record_model_call)
    record_read = _sync(ops.record_read)
    record_updated = _sync(ops.record_updated)
    record_generated = _sync(ops.record_generated)
    record_created = _sync(ops.record_created)
    record_deleted = _sync(ops.record_deleted)
    record_user_action = _sync(ops.record_user_action)
    mention_entity = _sync(ops.mention_entity)
    update_artifact = _sync(ops.update_artifact)
    clear_artifact = _sync(ops.clear_artifact)
    apply_enrichment = _sync(ops.apply_enrichment)
    retain_ref = _sync(ops.retain_ref)
    release_ref = _sync(ops.release_ref)
    resolve_refs = _sync(ops.resolve_refs)
    translate_filters = _sync(ops.translate_filters)
    translate_payload = _sync(ops.translate_payload)
    read_refs = _sync(ops.read_refs)
    active_entities = _sync(ops.active_entities)
    context = _sync(ops.context)
    create_api_key = _sync(ops.create_api_key)
    revoke_api_key = _sync(ops.revoke_api_key)
    session_events = _sub(ops.session_events)
    entity_changes = _sub(ops.entity_changes)
    context_updated = _sub(ops.context_updated)
    sessions_changed = _sub(ops.sessions_changed)


class AsyncClient(_Base):
    """The asyncio client: the same methods as Client, awaited; subscriptions
    are async iterators and turns `async with`."""

    def __init__(self, url: Optional[str] = None, key: Optional[str] = None, *, timeout: float = 30.0,
                 reconnect: Optional[Reconnect] = None):
        super().__init__(url, key, reconnect)
        self._http = httpx.AsyncClient(headers={"authorization": f"Bearer {self.key}"}, timeout=timeout)

    async def execute(self, query: str, variables: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        return _read(await self._http.post(self.url, json={"query": query, "variables": variables or {}}))

    async def run(self, op: Op[T]) -> T:
        return op.result(await self.execute(op.query, op.variables))

    def turn(self, session: SessionLike, user_message: str) -> AsyncTurnScope:
        return AsyncTurnScope(self, session, user_message)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    open_session = _async(ops.open_session)
    update_session = _async(ops.update_session)
    reset_conversation = _async(ops.reset_conversation)
    session = _async(ops.session)
    session_by_key = _async(ops.session_by_key)
    viewer = _async(ops.viewer)
    sessions_changed_cursor = _async(ops.sessions_changed_cursor)
    begin_turn = _async(ops.begin_turn)
    end_turn = _async(ops.end_turn)
    record_exchange = _async(ops.record_exchange)
    record_items = _async(ops.record_items)
    turn_items = _async(ops.turn_items)
    fail_turn = _async(ops.fail_turn)
    update_turn = _async(ops.update_turn)
    record_step_result = _async(ops.record_step_result)
    record_model_call = _async(ops.record_model_call)
    record_read = _async(ops.record_read)
    record_updated = _async(ops.record_updated)
    record_generated = _async(ops.record_generated)
    record_created = _async(ops.record_created)
    record_deleted = _async(ops.record_deleted)
    record_user_action = _async(ops.record_user_action)
    mention_entity = _async(ops.mention_entity)
    update_artifact = _async(ops.update_artifact)
    clear_artifact = _async(ops.clear_artifact)
    apply_enrichment = _async(ops.apply_enrichment)
    retain_ref = _async(ops.retain_ref)
    release_ref = _async(ops.release_ref)
    resolve_refs = _async(ops.resolve_refs)
    translate_filters = _async(ops.translate_filters)
    translate_payload = _async(ops.translate_payload)
    read_refs = _async(ops.read_refs)
    active_entities = _async(ops.active_entities)
    context = _async(ops.context)
    create_api_key = _async(ops.create_api_key)
    revoke_api_key = _async(ops.revoke_api_key)
    session_events = _async_sub(ops.session_events)
    entity_changes = _async_sub(ops.entity_changes)
    context_updated = _async_sub(ops.context_updated)
    sessions_changed = _async_sub(ops.sessions_changed)
