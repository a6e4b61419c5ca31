package schema

import (
	"time"

	"entgo.io/contrib/entgql"
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
	"github.com/google/uuid"
)

// Event is one committed change, written in the same transaction as the
// change itself: the outbox subscriptions replay from and the audit trail.
// It carries session_id without a foreign key so that the event recording a
// session's deletion outlives the session.
type Event struct {
	ent.Schema
}

// Fields of the Event.
func (Event) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("id", uuid.UUID{}).Default(newID).Immutable(),
		field.Int64("sequence").Positive().Unique().Immutable().
			Comment("Global order of commits; assigned under a transaction-scoped lock so that it never commits out of order.").
			Annotations(entgql.OrderField("SEQUENCE")),
		field.UUID("session_id", uuid.UUID{}).Immutable(),
		field.String("tenant").Immutable().
			Comment("Copied from the session so that feeds filter by tenant without a join."),
		field.String("kind").NotEmpty().MaxLen(100).Immutable(),
		field.JSON("payload", map[string]any{}).Immutable().
			Annotations(entgql.Type("Map")),
		field.Time("created_at").Default(time.Now).Immutable().
			Annotations(entgql.OrderField("CREATED_AT")),
	}
}

// Indexes of the Event.
func (Event) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("session_id", "sequence"),
	}
}

// Annotations of the Event.
func (Event) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.RelayConnection(),
		entgql.MultiOrder(),
	}
}
