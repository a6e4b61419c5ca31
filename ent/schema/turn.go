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

// Turn is one exchange of a session: the user's message, the assistant's
// answer and what the pipeline did in between.
type Turn struct {
	ent.Schema
}

// Fields of the Turn.
func (Turn) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("id", uuid.UUID{}).Default(newID).Immutable(),
		field.UUID("session_id", uuid.UUID{}).Immutable(),
		field.Int("number").Positive().Immutable().
			Annotations(entgql.OrderField("NUMBER")),
		field.Text("user_message").Default(""),
		field.Text("assistant_message").Default(""),
		field.Text("assistant_summary").Default("").
			Comment("The assistant message compressed by the three summarization rules (docs/context-rules.md)."),
		field.Int("user_tokens").Default(0).NonNegative(),
		field.Int("assistant_tokens").Default(0).NonNegative(),
		field.Int("item_count").Default(0).NonNegative().
			Comment("How many items were recorded in the turn (recordItems): the builds read items only for turns that have some."),
		field.Enum("status").NamedValues("Open", "OPEN", "Completed", "COMPLETED", "Failed", "FAILED").Default("OPEN").
			Annotations(entgql.OrderField("STATUS")),
		field.JSON("execution_summary", &schematype.ExecutionSummary{}).Optional().
			Annotations(entgql.Type("ExecutionSummary")),
		field.Time("started_at").Default(time.Now).Immutable().
			Annotations(entgql.OrderField("STARTED_AT")),
		field.Time("completed_at").Optional().Nillable(),
	}
}

// Edges of the Turn.
func (Turn) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("session", Session.Type).Ref("turns").Field("session_id").Unique().Required().Immutable(),
	}
}

// Indexes of the Turn.
func (Turn) Indexes() []ent.Index {
	return []ent.Index{
		// A session's turns in id order, as its nested pages and ent's eager
		// loads read them (WHERE session_id = $1 ORDER BY id LIMIT n): the
		// primary key is (id, session_id), so without this index the
		// planner walks the whole key in id order for a long session.
		index.Fields("session_id", "id"),
		index.Fields("session_id", "number").Unique(),
		// At most one open turn per session: beginning a turn is one insert,
		// which this index refuses while another is open. The predicate is
		// written as PostgreSQL normalizes it, so that no drift is found.
		index.Fields("session_id").Unique().StorageKey("turn_one_open_per_session").
			Annotations(entsql.IndexWhere("((status)::text = 'OPEN'::text)")),
		// The dashboard's search of what was said.
		searchable("user_message", "turn_user_message_trgm"),
		searchable("assistant_message", "turn_assistant_message_trgm"),
	}
}

// Annotations of the Turn.
func (Turn) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.RelayConnection(),
		entgql.MultiOrder(),
	}
}
