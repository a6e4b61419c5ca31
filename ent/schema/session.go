package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"

	"sessiongraph/ent/schema/schematype"
)

// Session is one agent conversation: its state, its registry counters and its
// lifecycle timestamps. Every other session-scoped row hangs off it.
type Session struct {
	ent.Schema
}

// Fields of the Session.
func (Session) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("id", uuid.UUID{}).Default(newID).Immutable(),
		field.String("tenant").NotEmpty().MaxLen(200).Immutable(),
		field.String("external_key").NotEmpty().MaxLen(500).Immutable().
			Comment("The runtime's own key for the conversation; get-or-create is by tenant and this key."),
		field.String("user_id").Default("").MaxLen(500),
		field.String("domain").NotEmpty().MaxLen(200).Immutable(),
		field.Enum("status").NamedValues("Active", "ACTIVE", "Expired", "EXPIRED").Default("ACTIVE").
			Annotations(entgql.OrderField("STATUS")),
		field.Text("system_prompt").Default(""),
		field.JSON("focus", &schematype.Focus{}).Optional().
			Annotations(entgql.Type("Focus")),
		field.Text("engagement_summary").Default(""),
		field.Text("history_summary").Default(""),
		field.Text("reasoning_summary").Default(""),
		field.JSON("pending_clarification", map[string]any{}).Optional().
			Annotations(entgql.Type("Map")),
		field.Int("current_turn").Default(0).NonNegative().
			Annotations(entgql.OrderField("CURRENT_TURN")),
		field.String("tokenizer").Default("cl100k_base").
			Comment("The BPE encoding that counts this session's tokens: cl100k_base, o200k_base or chars4."),
		field.Int("token_count").Default(0).NonNegative().
			Annotations(entgql.OrderField("TOKEN_COUNT")),
		field.Int("failed_turns").Default(0).NonNegative().
			Comment("How many of the session's turns failed: they are not part of the conversation an LLM is shown, so builds count them out of current_turn.").
			Annotations(entgql.Skip()),
		field.JSON("ref_counters", map[string]int{}).Default(map[string]int{}).
			Comment("Last number handed out per entity type; never reset, so refs are never reused.").
			Annotations(entgql.Skip()),
		field.JSON("gen_counters", map[string]int{}).Default(map[string]int{}).
			Comment("Last number handed out per entity type for gen_ refs.").
			Annotations(entgql.Skip()),
		field.JSON("metadata", map[string]string{}).Default(map[string]string{}).
			Annotations(entgql.Type("StringMap")),
		field.Int("ttl_seconds").Positive().
			Comment("Inactivity after which the session expires."),
		field.Time("created_at").Default(time.Now).Immutable().
			Annotations(entgql.OrderField("CREATED_AT")),
		field.Time("updated_at").Default(time.Now).UpdateDefault(time.Now).
			Annotations(entgql.OrderField("UPDATED_AT")),
		field.Time("last_active_at").Default(time.Now).
			Annotations(entgql.OrderField("LAST_ACTIVE_AT")),
		field.Time("expires_at").
			Annotations(entgql.OrderField("EXPIRES_AT")),
		field.Time("expired_at").Optional().Nillable(),
		field.Int64("event_sequence").Default(0).NonNegative().
			Comment("The sequence of the session's newest event: the next event takes the next number under the session's row lock.").
			Annotations(entgql.Skip()),
	}
}

// Edges of the Session.
func (Session) Edges() []ent.Edge {
	cascade := entsql.OnDelete(entsql.Cascade)
	return []ent.Edge{
		edge.To("turns", Turn.Type).Annotations(cascade, entgql.RelayConnection()),
		edge.To("refs", Ref.Type).Annotations(cascade, entgql.RelayConnection()),
		edge.To("artifacts", Artifact.Type).Annotations(cascade, entgql.RelayConnection()),
		edge.To("step_results", StepResult.Type).Annotations(cascade, entgql.RelayConnection()),
		edge.To("context_receipts", ContextReceipt.Type).Annotations(cascade, entgql.RelayConnection()),
		// Read through receipts and the totals (modelCallTotals), not as a
		// connection of their own.
		edge.To("model_calls", ModelCall.Type).Annotations(cascade, entgql.Skip()),
		edge.To("turn_items", TurnItem.Type).Annotations(cascade, entgql.Skip(entgql.SkipAll)),
	}
}

// Indexes of the Session.
func (Session) Indexes() []ent.Index {
	return []ent.Index{
		// Session lists in the orders a dashboard shows (newest, recently
		// active), across tenants for an admin and within one for a client
		// key, and in id order within a tenant (the default order): a page
		// reads its rows from the index, then sorts ties by id as it goes,
		// instead of sorting every session. (tenant, last_active_at) below
		// serves a tenant's recently active.
		index.Fields("created_at"),
		index.Fields("last_active_at"),
		index.Fields("tenant", "created_at"),
		index.Fields("tenant", "id"),
		// The expiry reaper scans active sessions by deadline.
		index.Fields("status", "expires_at"),
		index.Fields("tenant", "last_active_at"),
		index.Fields("tenant", "user_id"),
		// The dashboard's search.
		searchable("external_key", "session_external_key_trgm"),
		searchable("user_id", "session_user_id_trgm"),
		searchable("tenant", "session_tenant_trgm"),
	}
}

// Annotations of the Session.
func (Session) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.RelayConnection(),
		entgql.MultiOrder(),
		entgql.QueryField(),
	}
}
