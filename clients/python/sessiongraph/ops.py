"""The operations, declared once for the sync and the async client.

Each function here returns an Op: the GraphQL document, its variables and how
to decode the answer. A mutation's keyword parameters are its input's fields in
snake_case (``session`` is ``sessionID`` and takes an id or anything with
``.id``); None leaves a field out. tests/test_schema.py checks every
declaration against graph/schema/*.graphql.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from typing import Any, Callable, Dict, Generic, List, Optional, Sequence, TypeVar, Union

from .types import (
    ActiveEntities, ApplyEnrichmentPayload, BeginTurnPayload, ClearArtifactPayload, ContextBuild,
    ContextOptions, CreateAPIKeyPayload, EndTurnPayload, EnrichmentLabel, EntityChange,
    ExecutionSummaryInput, FailTurnPayload, FilterInput, JSONMap, MentionEntityPayload,
    OpenSessionPayload, ReadRefsResult, RecordCreatedPayload, RecordDeletedPayload,
    RecordExchangePayload, RecordGeneratedPayload, RecordItemsPayload, RecordModelCallPayload, RecordReadPayload, RecordStepResultPayload,
    RecordUpdatedPayload, RecordUserActionPayload, ReleaseRefPayload, ResetConversationPayload, ResolvedRef,
    RetainRefPayload, RevokeAPIKeyPayload, Session, SessionEvent, TranslatedFilters,
    TranslatedPayload, TurnItem, UpdateArtifactPayload, UpdateSessionPayload, UpdateTurnPayload, Viewer,
)
from .codec import camel, decode, encode, inner_type, selection

T = TypeVar("T")

SessionLike = Union[str, Any]
"""A session id, or an object with .id (Session, OpenSessionPayload.session)."""


def session_id(s: SessionLike) -> str:
    if isinstance(s, str):
        return s
    if hasattr(s, "session") and not hasattr(s, "id"):  # an OpenSessionPayload
        s = s.session
    return s.id


class Op(Generic[T]):
    """One GraphQL operation and how to read its answer."""

    def __init__(self, query: str, variables: Dict[str, Any], result: Callable[[Dict[str, Any]], T]):
        self.query = query
        self.variables = variables
        self.result = result


@dataclasses.dataclass
class Spec:
    """What an operation declares, for the schema test."""
    kind: str                 # mutation, query, session, subscription
    field: str                # the root (or Session) field
    result: Any               # the Python type it decodes to
    args: Dict[str, str]      # GraphQL argument name -> its declared type
    params: Dict[str, bool]   # mutation input field -> required by the Python signature
    resume: Optional[str] = None


SPECS: List[Spec] = []


def _select(tp: Any) -> str:
    inner = inner_type(tp)
    return " " + selection(inner) if dataclasses.is_dataclass(inner) else ""


def _param(name: str) -> str:
    return "sessionID" if name == "session" else camel(name)


def _value(name: str, v: Any) -> Any:
    return session_id(v) if name == "session" else encode(v)


def mutation(field: str, payload: type) -> Callable[[Callable[..., T]], Callable[..., Op[T]]]:
    """A mutation taking one input, whose fields are the function's parameters."""
    input_type = field[0].upper() + field[1:] + "Input"
    query = f"mutation {field[0].upper() + field[1:]}($input: {input_type}!) {{ {field}(input: $input){_select(payload)} }}"

    def deco(f: Callable[..., T]) -> Callable[..., Op[T]]:
        sig = inspect.signature(f)
        SPECS.append(Spec("mutation", field, payload, {"input": input_type + "!"},
                          {_param(n): p.default is inspect.Parameter.empty for n, p in sig.parameters.items()}))

        @functools.wraps(f)
        def op(*args: Any, **kwargs: Any) -> Op[T]:
            bound = sig.bind(*args, **kwargs)
            inp = {_param(n): _value(n, v) for n, v in bound.arguments.items() if v is not None}
            return Op(query, {"input": inp}, lambda data: decode(payload, data[field]))
        return op
    return deco


def _args_doc(args: Dict[str, str]) -> tuple:
    decl = ", ".join(f"${a}: {t}" for a, t in args.items())
    use = ", ".join(f"{a}: ${a}" for a in args)
    return decl, use


def field_op(kind: str, field: str, result: Any, resume: Optional[str] = None,
             **args: str) -> Callable[[Callable[..., T]], Callable[..., Op[T]]]:
    """A query field (kind 'query'), a Session field ('session', first parameter
    the session) or a subscription; args maps each GraphQL argument to its type,
    in the order of the function's parameters."""

    def deco(f: Callable[..., T]) -> Callable[..., Op[T]]:
        sig = inspect.signature(f)
        names = [n for n in sig.parameters if not (kind == "session" and n == "session")]
        gql = [_param(n) for n in names]
        assert gql == list(args), (f.__name__, gql, list(args))
        SPECS.append(Spec(kind, field, result, dict(args), {}, resume))
        decl, use = _args_doc(args)
        call = f"{field}({use})" if use else field
        name = f.__name__.title().replace("_", "")
        if kind == "session":
            decl = "$session: ID!" + (", " + decl if decl else "")
            query = f"query {name}({decl}) {{ session(id: $session) {{ {call}{_select(result)} }} }}"
        else:
            op_kind = "subscription" if kind == "subscription" else "query"
            query = f"{op_kind} {name}{f'({decl})' if decl else ''} {{ {call}{_select(result)} }}"

        def read(data: Dict[str, Any]) -> Any:
            if kind == "session":
                data = data["session"]
                if data is None:
                    from .errors import SessionGraphError
                    raise SessionGraphError("session not found", code="NOT_FOUND")
            return decode(result, data[field])

        @functools.wraps(f)
        def op(*a: Any, **kw: Any) -> Op[T]:
            bound = sig.bind(*a, **kw)
            bound.apply_defaults()
            variables = {_param(n): _value(n, v) for n, v in bound.arguments.items()}
            if kind == "session":
                variables["session"] = variables.pop("sessionID")
            return Op(query, variables, read)
        op.spec = SPECS[-1]  # type: ignore[attr-defined]
        return op
    return deco


# ----------------------------------------------------------------- sessions

@mutation("openSession", OpenSessionPayload)
def open_session(tenant: str, external_key: str, *, domain: Optional[str] = None,
                 user_id: Optional[str] = None, system_prompt: Optional[str] = None,
                 ttl_seconds: Optional[int] = None, metadata: Optional[Dict[str, str]] = None,
                 tokenizer: Optional[str] = None) -> OpenSessionPayload:
    """Get or create the live session of a tenant's external key."""


@mutation("updateSession", UpdateSessionPayload)
def update_session(id: str, *, focus: Optional[JSONMap] = None, clear_focus: Optional[bool] = None,
                   engagement_summary: Optional[str] = None, history_summary: Optional[str] = None,
                   reasoning_summary: Optional[str] = None, pending_clarification: Optional[JSONMap] = None,
                   clear_pending_clarification: Optional[bool] = None, system_prompt: Optional[str] = None,
                   user_id: Optional[str] = None, ttl_seconds: Optional[int] = None,
                   metadata: Optional[Dict[str, str]] = None,
                   remove_metadata: Optional[List[str]] = None) -> UpdateSessionPayload:
    """Change a session's state in one commit."""


@mutation("resetConversation", ResetConversationPayload)
def reset_conversation(session: SessionLike, *, keep_system_prompt: Optional[bool] = None) -> ResetConversationPayload:
    """Clear the conversation history, keeping refs (and the system prompt unless told)."""


@field_op("query", "session", Optional[Session], id="ID!")
def session(id: str) -> Optional[Session]:
    """A session by id."""


@field_op("query", "sessionByKey", Optional[Session], tenant="String!", externalKey="String!")
def session_by_key(tenant: str, external_key: str) -> Optional[Session]:
    """The live session of a tenant's external key, or None."""


@field_op("query", "viewer", Viewer)
def viewer() -> Viewer:
    """Who the client's key is."""


@field_op("query", "sessionsChangedCursor", str)
def sessions_changed_cursor() -> str:
    """The sessionsChanged feed's position now."""


# -------------------------------------------------------------------- turns

@mutation("beginTurn", BeginTurnPayload)
def begin_turn(session: SessionLike, user_message: str) -> BeginTurnPayload:
    """Open the session's next turn."""


@mutation("endTurn", EndTurnPayload)
def end_turn(session: SessionLike, assistant_message: str, *,
             summary: Union[ExecutionSummaryInput, JSONMap, None] = None,
             closing: Optional[List[JSONMap]] = None) -> EndTurnPayload:
    """Complete the open turn; closing writes ({"read": {...}}, {"created": {...}}, ...) land first, in the same commit."""


@mutation("recordExchange", RecordExchangePayload)
def record_exchange(session: SessionLike, user_message: str, assistant_message: str, *,
                    summary: Union[ExecutionSummaryInput, JSONMap, None] = None) -> RecordExchangePayload:
    """Record a user message and its answer as the next turn, in one request and one commit."""


@mutation("recordItems", RecordItemsPayload)
def record_items(session: SessionLike, items: Sequence[str], *, turn_id: Optional[str] = None) -> RecordItemsPayload:
    """Append items to the open turn, each its JSON text (kept byte for byte), such as the Agents SDK's
    json.dumps(item): messages of any role, function calls and their outputs, reasoning."""


TURN_ITEMS = ("query TurnItems($session: ID!, $number: Int!) { session(id: $session) { "
              "turns(first: 1, where: {number: $number}) { edges { node { items" + _select(List[TurnItem]) + " } } } } }")


def turn_items(session: SessionLike, number: int) -> Op[List[TurnItem]]:
    """The items of the session's turn number, in order (Turn.items): its user message, the items
    recorded in it, its assistant message; [] when there is no such turn."""
    def read(data: Dict[str, Any]) -> List[TurnItem]:
        if data["session"] is None:
            from .errors import SessionGraphError
            raise SessionGraphError("session not found", code="NOT_FOUND")
        edges = data["session"]["turns"]["edges"] or []
        return decode(List[TurnItem], edges[0]["node"]["items"]) if edges else []
    return Op(TURN_ITEMS, {"session": session_id(session), "number": number}, read)


@mutation("failTurn", FailTurnPayload)
def fail_turn(session: SessionLike, reason: str) -> FailTurnPayload:
    """Close the open turn as failed."""


@mutation("updateTurn", UpdateTurnPayload)
def update_turn(session: SessionLike, summary: Union[ExecutionSummaryInput, JSONMap]) -> UpdateTurnPayload:
    """Merge into the open turn's execution summary."""


@mutation("recordStepResult", RecordStepResultPayload)
def record_step_result(session: SessionLike, step: int, kind: str, *, description: Optional[str] = None,
                       data: Any = None, refs: Optional[List[str]] = None) -> RecordStepResultPayload:
    """Describe a step of the open turn (kind READ, WRITE, GENERATE or ANALYZE), or give its data."""


@mutation("recordModelCall", RecordModelCallPayload)
def record_model_call(model: str, input_tokens: int, output_tokens: int, latency_ms: int, cost: float, *,
                      session: Optional[SessionLike] = None, node: Optional[str] = None,
                      receipt_id: Optional[str] = None, finish_reason: Optional[str] = None,
                      error: Optional[str] = None) -> RecordModelCallPayload:
    """Record the model call a recorded build fed: name its receipt_id, or its session and node (the
    node's newest build in the current turn). cost is in US dollars; error is None when the call succeeded."""


# ----------------------------------------------------------------- registry

@mutation("recordRead", RecordReadPayload)
def record_read(session: SessionLike, records: Sequence[JSONMap], *, entity_type: Optional[str] = None,
                table: Optional[str] = None, step: Optional[int] = None) -> RecordReadPayload:
    """Register records read from the database (by entity_type or table); get them back as the LLM should see them."""


@mutation("recordUpdated", RecordUpdatedPayload)
def record_updated(session: SessionLike, records: Sequence[JSONMap], *, entity_type: Optional[str] = None,
                   table: Optional[str] = None, step: Optional[int] = None) -> RecordUpdatedPayload:
    """Register records the runtime updated."""


@mutation("recordGenerated", RecordGeneratedPayload)
def record_generated(session: SessionLike, entity_type: str, content: JSONMap, *,
                     label: Optional[str] = None, step: Optional[int] = None) -> RecordGeneratedPayload:
    """Register generated content as gen_{type}_{n} with a pending artifact."""


@mutation("recordCreated", RecordCreatedPayload)
def record_created(session: SessionLike, entity_type: str, entity_id: str, *, label: Optional[str] = None,
                   gen_ref: Optional[str] = None, step: Optional[int] = None) -> RecordCreatedPayload:
    """Register an entity the runtime saved, promoting the generated ref it saves."""


@mutation("recordDeleted", RecordDeletedPayload)
def record_deleted(session: SessionLike, entity_type: str, entity_ids: Sequence[str], *,
                   step: Optional[int] = None) -> RecordDeletedPayload:
    """Tag entities the runtime deleted."""


@mutation("recordUserAction", RecordUserActionPayload)
def record_user_action(session: SessionLike, kind: str, entity_type: str, entity_id: str, *,
                       label: Optional[str] = None) -> RecordUserActionPayload:
    """Tag an entity the user changed or mentioned (kind CREATED, UPDATED, DELETED or MENTIONED)."""


@mutation("mentionEntity", MentionEntityPayload)
def mention_entity(session: SessionLike, refs: Sequence[str]) -> MentionEntityPayload:
    """Keep refs in the active window."""


@mutation("updateArtifact", UpdateArtifactPayload)
def update_artifact(session: SessionLike, ref: str, content: JSONMap, *,
                    label: Optional[str] = None) -> UpdateArtifactPayload:
    """Replace a generated entity's content (revision + 1)."""


@mutation("clearArtifact", ClearArtifactPayload)
def clear_artifact(session: SessionLike, ref: str) -> ClearArtifactPayload:
    """Clear a pending or saved artifact before its turn ends."""


@mutation("applyEnrichment", ApplyEnrichmentPayload)
def apply_enrichment(session: SessionLike, labels: Sequence[Union[EnrichmentLabel, JSONMap]], *,
                     records: Optional[Sequence[JSONMap]] = None, entity_type: Optional[str] = None,
                     table: Optional[str] = None) -> ApplyEnrichmentPayload:
    """Set labels of refs in the enrichment queue."""


@mutation("retainRef", RetainRefPayload)
def retain_ref(session: SessionLike, ref: str, reason: str) -> RetainRefPayload:
    """Keep a ref active past the turn window, with the reason."""


@mutation("releaseRef", ReleaseRefPayload)
def release_ref(session: SessionLike, ref: str) -> ReleaseRefPayload:
    """Let a retained ref fall out of context."""


# ------------------------------------------------- translation and context

@field_op("session", "resolveRefs", List[ResolvedRef], refs="[String!]!")
def resolve_refs(session: SessionLike, refs: Sequence[str]) -> List[ResolvedRef]:
    """Entity ids of refs, for the runtime."""


@field_op("session", "translateFilters", TranslatedFilters,
          filters="[FilterInput!]!", entityType="String", table="String")
def translate_filters(session: SessionLike, filters: Sequence[Union[FilterInput, JSONMap]],
                      entity_type: Optional[str] = None, table: Optional[str] = None) -> TranslatedFilters:
    """Refs to UUIDs in filters on an entity type (by entity_type or table)."""


@field_op("session", "translatePayload", TranslatedPayload, entityType="String!", data="Map!")
def translate_payload(session: SessionLike, entity_type: str, data: JSONMap) -> TranslatedPayload:
    """Refs to UUIDs in a record about to be written."""


@field_op("session", "readRefs", ReadRefsResult, refs="[String!]!")
def read_refs(session: SessionLike, refs: Sequence[str]) -> ReadRefsResult:
    """Reads of refs: generated ones answered from their artifacts."""


@field_op("session", "activeEntities", ActiveEntities, turnsWindow="Int")
def active_entities(session: SessionLike, turns_window: Optional[int] = None) -> ActiveEntities:
    """The session's refs by tier; the server's default window when turns_window is None."""


@field_op("session", "context", ContextBuild, node="ContextNode!", options="ContextOptions")
def context(session: SessionLike, node: str, options: Union[ContextOptions, JSONMap, None] = None) -> ContextBuild:
    """The prompt context of a node: UNDERSTAND, THINK, ACT, REPLY or MESSAGES."""


# --------------------------------------------------------------------- admin

@mutation("createAPIKey", CreateAPIKeyPayload)
def create_api_key(name: str, role: str, *, tenant: Optional[str] = None) -> CreateAPIKeyPayload:
    """Create an API key (ADMIN only); the payload's key is shown once."""


@mutation("revokeAPIKey", RevokeAPIKeyPayload)
def revoke_api_key(id: str) -> RevokeAPIKeyPayload:
    """Revoke an API key (ADMIN only)."""


# ------------------------------------------------------------- subscriptions

@field_op("subscription", "sessionEvents", SessionEvent, resume="sequence", sessionID="ID!", after="Int")
def session_events(session: SessionLike, after: Optional[int] = None) -> SessionEvent:
    """Every event of a session after the sequence after."""


@field_op("subscription", "entityChanges", EntityChange, resume="sequence",
          sessionID="ID!", entityTypes="[String!]", after="Int")
def entity_changes(session: SessionLike, entity_types: Optional[Sequence[str]] = None,
                   after: Optional[int] = None) -> EntityChange:
    """Ref and artifact changes of a session after the sequence after."""


@field_op("subscription", "contextUpdated", ContextBuild, sessionID="ID!", node="ContextNode!",
          options="ContextOptions")
def context_updated(session: SessionLike, node: str,
                    options: Union[ContextOptions, JSONMap, None] = None) -> ContextBuild:
    """A fresh context build now and after each change."""


@field_op("subscription", "sessionsChanged", SessionEvent, resume="cursor", after="String",
          kinds="[String!]")
def sessions_changed(after: Optional[str] = None, kinds: Optional[Sequence[str]] = None) -> SessionEvent:
    """Events of every session the key may see, after the cursor after: sessions opened,
    updated, expired or deleted, or the event kinds named in kinds (such as turn.began)."""


# The last event sequence of a session, where a subscription without `after` starts.
LAST_SEQUENCE = ("query LastSequence($session: ID!) { session(id: $session) "
                 "{ events(last: 1, orderBy: [{field: SEQUENCE}]) { edges { node { sequence } } } } }")
