package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/dialect"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"

	"sessiongraph/ent/schema/schematype"
)

// ModelCall is the call to a model that a recorded context build fed: the
// runtime reports it after the call (recordModelCall), so that an admin can
// see each build's model, tokens, latency, cost and error, and find the
// slow, failed and expensive turns (README, "Model calls").
type ModelCall struct {
	ent.Schema
}

// Fields of the ModelCall.
func (ModelCall) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("id", uuid.UUID{}).Default(newID).Immutable(),
		field.UUID("session_id", uuid.UUID{}).Immutable(),
		// No ent edge to the receipt: its primary key is (id, session_id)
		// on a distributed database (docs/scale-out.md, "What ent cannot
		// say"), and the calls are read by their session and receipt.
		field.UUID("receipt_id", uuid.UUID{}).Immutable().
			Comment("The context receipt of the build the call was fed.").
			Annotations(entgql.Type("ID")),
		field.Int("turn").NonNegative().Immutable().
			Comment("The receipt's turn."),
		field.String("node").GoType(schematype.Node("")).Immutable().
			Comment("The receipt's node.").
			Annotations(entgql.Type("ContextNode")),
		field.String("model").NotEmpty().MaxLen(200).Immutable(),
		field.Int("input_tokens").NonNegative().Immutable(),
		field.Int("output_tokens").NonNegative().Immutable(),
		field.Int("latency_ms").NonNegative().Immutable().
			Comment("How long the call took, in milliseconds."),
		// numeric, not float: a session's cost is a sum of many small
		// amounts, which PostgreSQL adds exactly.
		field.Float("cost").Min(0).Immutable().
			SchemaType(map[string]string{dialect.Postgres: "numeric(20,10)"}).
			Comment("What the call cost, in US dollars."),
		field.String("finish_reason").Optional().Nillable().MaxLen(100).Immutable().
			Comment("Why the model stopped (stop, length, tool_calls, ...), as the provider says it."),
		field.Text("error").Optional().Nillable().Immutable().
			Comment("What went wrong; null when the call succeeded. A call with an error is a failed call."),
		field.Time("created_at").Default(time.Now).Immutable(),
	}
}

// Edges of the ModelCall.
func (ModelCall) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("session", Session.Type).Ref("model_calls").Field("session_id").Unique().Required().Immutable(),
	}
}

// Indexes of the ModelCall.
func (ModelCall) Indexes() []ent.Index {
	return []ent.Index{
		// A receipt's calls; a turn's and a session's totals, and the
		// session list's filters on them, read a session's calls by turn.
		index.Fields("session_id", "receipt_id"),
		index.Fields("session_id", "turn"),
	}
}

// Annotations of the ModelCall.
func (ModelCall) Annotations() []schema.Annotation {
	return []schema.Annotation{
		// Read through its receipt, never filtered or paged on its own.
		entgql.Skip(entgql.SkipWhereInput, entgql.SkipOrderField),
	}
}
