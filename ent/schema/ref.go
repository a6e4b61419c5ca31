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
)

// Ref is one entry of a session's registry: the short name an LLM uses
// (recipe_1, gen_recipe_1) for a database entity or a generated one.
type Ref struct {
	ent.Schema
}

// Fields of the Ref.
func (Ref) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("id", uuid.UUID{}).Default(newID).Immutable(),
		field.UUID("session_id", uuid.UUID{}).Immutable(),
		field.String("ref").NotEmpty().MaxLen(200).Immutable().
			Annotations(entgql.OrderField("REF")),
		field.String("entity_type").NotEmpty().MaxLen(200).Immutable().
			Annotations(entgql.OrderField("ENTITY_TYPE")),
		field.UUID("entity_id", uuid.UUID{}).Optional().Nillable().
			Comment("Null while a generated entity is not saved yet (it is pending)."),
		field.Text("label").Default(""),
		field.String("action").NotEmpty().MaxLen(50).
			Comment("The action tag: read, created, updated, deleted, generated, linked; a :user suffix marks frontend changes."),
		field.Enum("detail_level").NamedValues("Full", "FULL", "Summary", "SUMMARY").Optional().Nillable(),
		field.Int("full_turn").Optional().Nillable().
			Comment("The turn in which the full record was last read."),
		field.Int("turn_created").NonNegative().Immutable().
			Annotations(entgql.OrderField("TURN_CREATED")),
		field.Int("turn_last_referenced").NonNegative().
			Annotations(entgql.OrderField("TURN_LAST_REFERENCED")),
		field.Int("source_step").Optional().Nillable(),
		field.Int("turn_promoted").Optional().Nillable(),
		field.Text("active_reason").Optional().Nillable().
			Comment("Why Understand keeps this ref active past the window; null when not retained."),
		field.String("enrich_table").Optional().Nillable().
			Comment("Set while the ref waits in the enrichment queue: the table to read its label from."),
		field.String("enrich_name_column").Optional().Nillable(),
		field.Time("created_at").Default(time.Now).Immutable().
			Annotations(entgql.OrderField("CREATED_AT")),
		field.Time("updated_at").Default(time.Now).UpdateDefault(time.Now),
	}
}

// Edges of the Ref.
func (Ref) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("session", Session.Type).Ref("refs").Field("session_id").Unique().Required().Immutable(),
		edge.To("artifact", Artifact.Type).Unique().Annotations(entsql.OnDelete(entsql.Cascade)),
	}
}

// Indexes of the Ref.
func (Ref) Indexes() []ent.Index {
	return []ent.Index{
		// A session's refs in id order, as its nested pages and ent's eager
		// loads read them (WHERE session_id = $1 ORDER BY id LIMIT n): the
		// primary key is (id, session_id), so without this index the
		// planner walks the whole key in id order for a long session.
		index.Fields("session_id", "id"),
		index.Fields("session_id", "ref").Unique(),
		// The same UUID always maps to the same ref within a session; Postgres
		// lets any number of pending (null) entity ids coexist.
		index.Fields("session_id", "entity_id").Unique(),
		// Context builds read only the refs within the turn window ...
		index.Fields("session_id", "turn_last_referenced"),
		// ... plus the pending generated and the retained ones, whatever
		// their age: this partial index keeps that read from scanning every
		// ref of a long session. (Written as PostgreSQL normalizes it.)
		index.Fields("session_id").StorageKey("ref_session_id_live").
			Annotations(entsql.IndexWhere("((entity_id IS NULL) OR (active_reason IS NOT NULL))")),
		// A search of sessions by what they refer to.
		searchable("label", "ref_label_trgm"),
	}
}

// Annotations of the Ref.
func (Ref) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.RelayConnection(),
		entgql.MultiOrder(),
	}
}
