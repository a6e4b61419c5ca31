package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"
)

// StepResult is what one step of a turn fetched or produced, as the LLM
// should see it (refs, never UUIDs): the Act node's working data. The
// newest few are shown in full, older ones only as summaries
// (README, "Step results").
type StepResult struct {
	ent.Schema
}

// Fields of the StepResult.
func (StepResult) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("id", uuid.UUID{}).Default(newID).Immutable(),
		field.UUID("session_id", uuid.UUID{}).Immutable(),
		field.Int("turn").Positive().Immutable().
			Annotations(entgql.OrderField("TURN")),
		field.Int("step").Positive().Immutable().
			Annotations(entgql.OrderField("STEP")),
		field.Enum("kind").NamedValues("Read", "READ", "Write", "WRITE", "Generate", "GENERATE", "Analyze", "ANALYZE"),
		field.Text("description").Default(""),
		field.JSON("data", []any{}).Default([]any{}).
			Comment("The step's items as the LLM sees them: translated records, generated content, an analysis.").
			Annotations(entgql.Type("[JSON!]")),
		field.JSON("refs", []string{}).Default([]string{}).
			Comment("The refs the step touched, first seen first."),
		field.Int("item_count").Default(0).NonNegative().
			Comment("How many items the step had; more than data holds when data was cut at its size limit."),
		field.Time("created_at").Default(time.Now).Immutable().
			Annotations(entgql.OrderField("CREATED_AT")),
		field.Time("updated_at").Default(time.Now).UpdateDefault(time.Now),
	}
}

// Edges of the StepResult.
func (StepResult) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("session", Session.Type).Ref("step_results").Field("session_id").Unique().Required().Immutable(),
	}
}

// Indexes of the StepResult.
func (StepResult) Indexes() []ent.Index {
	return []ent.Index{
		// A session's step results in id order, as its connection pages them by
		// default (WHERE session_id = $1 ORDER BY id LIMIT n): the primary
		// key is (id, session_id), which only a walk of the whole key
		// would read in that order.
		index.Fields("session_id", "id"),
		// One result per step of a turn; read backwards, it also gives a
		// build the newest steps of a session without a sort.
		index.Fields("session_id", "turn", "step").Unique(),
	}
}

// Annotations of the StepResult.
func (StepResult) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.RelayConnection(),
		entgql.MultiOrder(),
	}
}
