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

// Artifact is generated content waiting to be saved (a pending
// artifact): it lives from generation through promotion until the
// turn that promoted it ends.
type Artifact struct {
	ent.Schema
}

// Fields of the Artifact.
func (Artifact) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("id", uuid.UUID{}).Default(newID).Immutable(),
		field.UUID("session_id", uuid.UUID{}).Immutable(),
		field.UUID("ref_id", uuid.UUID{}).Immutable(),
		field.String("entity_type").NotEmpty().MaxLen(200).Immutable(),
		field.Text("label").Default(""),
		field.JSON("content", map[string]any{}).
			Annotations(entgql.Type("Map")),
		field.Enum("status").NamedValues("Pending", "PENDING", "Promoted", "PROMOTED", "Cleared", "CLEARED").Default("PENDING").
			Annotations(entgql.OrderField("STATUS")),
		field.Int("revision").Default(1).Positive(),
		field.Int("created_turn").NonNegative().Immutable().
			Annotations(entgql.OrderField("CREATED_TURN")),
		field.Int("promoted_turn").Optional().Nillable(),
		field.Int("source_step").Optional().Nillable(),
		field.Time("created_at").Default(time.Now).Immutable().
			Annotations(entgql.OrderField("CREATED_AT")),
		field.Time("updated_at").Default(time.Now).UpdateDefault(time.Now),
	}
}

// Edges of the Artifact.
func (Artifact) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("session", Session.Type).Ref("artifacts").Field("session_id").Unique().Required().Immutable(),
		edge.From("ref", Ref.Type).Ref("artifact").Field("ref_id").Unique().Required().Immutable(),
	}
}

// Indexes of the Artifact.
func (Artifact) Indexes() []ent.Index {
	return []ent.Index{
		// A session's artifacts in id order, as its nested pages and ent's eager
		// loads read them (WHERE session_id = $1 ORDER BY id LIMIT n): the
		// primary key is (id, session_id), so without this index the
		// planner walks the whole key in id order for a long session.
		index.Fields("session_id", "id"),
		index.Fields("session_id", "status"),
		// One artifact per ref. The edge makes ref_id unique on its own in
		// ent's schema; the migration distributable replaces that index by
		// this one, which includes the distribution column
		// (docs/scale-out.md, migrations/citus_test.go).
		index.Fields("session_id", "ref_id").Unique(),
		// A ref's artifact by ref_id alone, as ent's edge loads it (the
		// GraphQL Ref.artifact field): not unique, so Citus allows it.
		index.Fields("ref_id"),
	}
}

// Annotations of the Artifact.
func (Artifact) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.RelayConnection(),
		entgql.MultiOrder(),
	}
}
