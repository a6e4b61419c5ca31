"""Typed payloads: thin dataclasses over graph/schema/*.graphql.

Each class names its GraphQL type in ``__gql__``; its fields are the fields the
client selects, in snake_case (``session_id`` is ``sessionID``). The selection
sent to the server is derived from these classes, and
tests/test_schema.py checks every one against the schema, so a renamed or
removed field fails the tests, not an agent in production.

Scalars: ``ID``, ``UUID``, ``Time``, ``Cursor`` and enums are ``str``;
``Map`` is ``dict``; ``JSON`` is ``Any``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

JSONMap = Dict[str, Any]


# ---------------------------------------------------------------- outputs


@dataclass
class Session:
    __gql__ = "Session"
    id: str
    tenant: str
    external_key: str
    user_id: str
    domain: str
    status: str
    system_prompt: str
    current_turn: int
    tokenizer: str
    token_count: int
    metadata: Dict[str, str]
    ttl_seconds: int
    created_at: str
    last_active_at: str
    expires_at: str
    expired_at: Optional[str]


@dataclass
class OpenSessionPayload:
    __gql__ = "OpenSessionPayload"
    session: Session
    created: bool
    replaced_session_id: Optional[str]


@dataclass
class StepSummary:
    __gql__ = "StepSummary"
    step: int
    kind: Optional[str]
    description: Optional[str]
    outcome: Optional[str]
    refs: Optional[List[str]]


@dataclass
class RetainedRef:
    __gql__ = "RetainedRef"
    ref: str
    reason: str


@dataclass
class Curation:
    __gql__ = "Curation"
    retained: Optional[List[RetainedRef]]
    demoted: Optional[List[str]]


@dataclass
class ExecutionSummary:
    __gql__ = "ExecutionSummary"
    decision: Optional[str]
    goal: Optional[str]
    steps: Optional[List[StepSummary]]
    curation: Optional[Curation]
    phase: Optional[str]
    user_expressed: Optional[str]
    blocked_reason: Optional[str]


@dataclass
class Turn:
    __gql__ = "Turn"
    id: str
    session_id: str
    number: int
    user_message: str
    assistant_message: str
    assistant_summary: str
    user_tokens: int
    assistant_tokens: int
    status: str
    execution_summary: Optional[ExecutionSummary]
    started_at: str
    completed_at: Optional[str]


@dataclass
class Ref:
    __gql__ = "Ref"
    id: str
    ref: str
    entity_type: str
    entity_id: Optional[str]
    label: str
    action: str
    detail_level: Optional[str]
    turn_created: int
    turn_last_referenced: int
    source_step: Optional[int]
    turn_promoted: Optional[int]
    active_reason: Optional[str]


@dataclass
class EnrichmentRequest:
    __gql__ = "EnrichmentRequest"
    ref: str
    entity_type: str
    entity_id: str
    table: str
    name_column: str


@dataclass
class RecordReadPayload:
    __gql__ = "RecordReadPayload"
    records: List[JSONMap]
    refs: List[Ref]
    enrichment_queue: List[EnrichmentRequest]


@dataclass
class RecordUpdatedPayload:
    __gql__ = "RecordUpdatedPayload"
    records: List[JSONMap]
    refs: List[Ref]
    enrichment_queue: List[EnrichmentRequest]


@dataclass
class RecordGeneratedPayload:
    __gql__ = "RecordGeneratedPayload"
    ref: Ref


@dataclass
class RecordCreatedPayload:
    __gql__ = "RecordCreatedPayload"
    ref: Ref
    promoted: bool


@dataclass
class RecordDeletedPayload:
    __gql__ = "RecordDeletedPayload"
    refs: List[Ref]


@dataclass
class RecordUserActionPayload:
    __gql__ = "RecordUserActionPayload"
    ref: Ref


@dataclass
class MentionEntityPayload:
    __gql__ = "MentionEntityPayload"
    refs: List[Ref]


@dataclass
class RetainRefPayload:
    __gql__ = "RetainRefPayload"
    ref: Ref


@dataclass
class ReleaseRefPayload:
    __gql__ = "ReleaseRefPayload"
    ref: Ref


@dataclass
class UpdateArtifactPayload:
    __gql__ = "UpdateArtifactPayload"
    ref: Ref


@dataclass
class ClearArtifactPayload:
    __gql__ = "ClearArtifactPayload"
    ref: Ref


@dataclass
class ApplyEnrichmentPayload:
    __gql__ = "ApplyEnrichmentPayload"
    refs: List[Ref]
    records: List[JSONMap]


@dataclass
class StepResult:
    __gql__ = "StepResult"
    id: str
    turn: int
    step: int
    kind: str
    description: str
    data: List[Any]
    refs: List[str]
    item_count: int


@dataclass
class RecordStepResultPayload:
    __gql__ = "RecordStepResultPayload"
    step_result: StepResult


@dataclass
class ModelCall:
    """The call to a model that a recorded context build fed."""
    __gql__ = "ModelCall"
    id: str
    receipt_id: str
    turn: int
    node: str
    model: str
    input_tokens: int
    output_tokens: int
    latency_ms: int
    cost: float
    finish_reason: Optional[str]
    error: Optional[str]


@dataclass
class RecordModelCallPayload:
    __gql__ = "RecordModelCallPayload"
    model_call: ModelCall


@dataclass
class BeginTurnPayload:
    __gql__ = "BeginTurnPayload"
    turn: Turn


@dataclass
class EndTurnPayload:
    __gql__ = "EndTurnPayload"
    turn: Turn


@dataclass
class RecordExchangePayload:
    __gql__ = "RecordExchangePayload"
    turn: Turn


@dataclass
class TurnItem:
    """One item of a turn (docs/api.md, "Items"): json is the item exactly as it
    was sent; the other fields are what the server parsed from it."""
    __gql__ = "TurnItem"
    position: int
    kind: str
    role: str
    name: str
    call_id: str
    arguments: str
    content: str
    json: str
    token_count: int


@dataclass
class RecordItemsPayload:
    __gql__ = "RecordItemsPayload"
    turn: Turn
    items: List[TurnItem]


@dataclass
class FailTurnPayload:
    __gql__ = "FailTurnPayload"
    turn: Turn


@dataclass
class UpdateTurnPayload:
    __gql__ = "UpdateTurnPayload"
    turn: Turn


@dataclass
class UpdateSessionPayload:
    __gql__ = "UpdateSessionPayload"
    session: Session


@dataclass
class ResetConversationPayload:
    __gql__ = "ResetConversationPayload"
    session: Session


@dataclass
class APIKey:
    __gql__ = "APIKey"
    id: str
    name: str
    role: str
    tenant: str
    revoked_at: Optional[str]


@dataclass
class CreateAPIKeyPayload:
    __gql__ = "CreateAPIKeyPayload"
    key: str
    api_key: APIKey


@dataclass
class RevokeAPIKeyPayload:
    __gql__ = "RevokeAPIKeyPayload"
    api_key: APIKey


@dataclass
class ContextSection:
    __gql__ = "ContextSection"
    name: str
    text: str
    token_count: int
    truncated: bool


@dataclass
class ChatMessage:
    """One message of a MESSAGES build: kind (MESSAGE, FUNCTION_CALL, ...), the
    call's name, call_id and arguments, and json, the item exactly as it was recorded."""
    __gql__ = "ChatMessage"
    role: str
    content: str
    token_count: int
    kind: str
    name: str
    call_id: str
    arguments: str
    json: str


@dataclass
class ContextTiers:
    __gql__ = "ContextTiers"
    active: List[str]
    generated: List[str]
    retained: List[str]


@dataclass
class ContextBuild:
    __gql__ = "ContextBuild"
    node: str
    text: str
    token_count: int
    budget: int
    tokenizer: str
    sections: List[ContextSection]
    messages: List[ChatMessage]
    tiers: ContextTiers
    truncated_turns: int
    notes: List[str]

    def section(self, name: str) -> Optional[ContextSection]:
        """The section called name, or None."""
        return next((s for s in self.sections if s.name == name), None)


@dataclass
class ResolvedRef:
    __gql__ = "ResolvedRef"
    ref: str
    entity_type: str
    entity_id: Optional[str]
    pending: bool


@dataclass
class Filter:
    __gql__ = "Filter"
    field: str
    op: str
    value: Optional[Any]


@dataclass
class TranslatedFilters:
    __gql__ = "TranslatedFilters"
    filters: List[Filter]
    pending_refs: List[str]


@dataclass
class TranslatedPayload:
    __gql__ = "TranslatedPayload"
    data: JSONMap
    saves: Optional[str]


@dataclass
class ReadRefsResult:
    __gql__ = "ReadRefsResult"
    records: List[JSONMap]
    from_database: List[str]


@dataclass
class ActiveEntities:
    __gql__ = "ActiveEntities"
    active: List[Ref]
    generated: List[Ref]
    retained: List[Ref]


@dataclass
class SessionEvent:
    __gql__ = "SessionEvent"
    sequence: int
    cursor: str
    session_id: str
    tenant: str
    kind: str
    # The session's turn the event belongs to; None before the first turn.
    turn: Optional[int]
    payload: JSONMap
    created_at: str


@dataclass
class EntityChange:
    __gql__ = "EntityChange"
    sequence: int
    kind: str
    ref: str
    entity_type: str
    action: str


@dataclass
class Viewer:
    __gql__ = "Viewer"
    role: str
    tenant: str
    name: str


# ----------------------------------------------------------------- inputs
# Input objects the client builds; None fields are left out.


@dataclass
class ContextOptions:
    __gql__ = "ContextOptions"
    turns_window: Optional[int] = None
    token_budget: Optional[int] = None
    tokenizer: Optional[str] = None
    strategy: Optional[str] = None
    model_limit: Optional[int] = None
    keep_recent: Optional[int] = None


@dataclass
class StepSummaryInput:
    __gql__ = "StepSummaryInput"
    step: int
    kind: Optional[str] = None
    description: Optional[str] = None
    outcome: Optional[str] = None
    refs: Optional[List[str]] = None


@dataclass
class RetainedRefInput:
    __gql__ = "RetainedRefInput"
    ref: str
    reason: str


@dataclass
class CurationInput:
    __gql__ = "CurationInput"
    retained: Optional[List[RetainedRefInput]] = None
    demoted: Optional[List[str]] = None


@dataclass
class ExecutionSummaryInput:
    __gql__ = "ExecutionSummaryInput"
    decision: Optional[str] = None
    goal: Optional[str] = None
    steps: Optional[List[StepSummaryInput]] = None
    curation: Optional[CurationInput] = None
    phase: Optional[str] = None
    user_expressed: Optional[str] = None
    blocked_reason: Optional[str] = None


@dataclass
class FilterInput:
    __gql__ = "FilterInput"
    field: str
    op: str
    value: Optional[Any] = None


@dataclass
class EnrichmentLabel:
    __gql__ = "EnrichmentLabel"
    ref: str
    label: str


INPUT_TYPES = [ContextOptions, StepSummaryInput, RetainedRefInput, CurationInput,
               ExecutionSummaryInput, FilterInput, EnrichmentLabel]
OUTPUT_TYPES = [c for c in list(globals().values())
                if isinstance(c, type) and dataclasses.is_dataclass(c) and c not in INPUT_TYPES]

__all__ = [c.__name__ for c in OUTPUT_TYPES + INPUT_TYPES] + ["JSONMap"]
