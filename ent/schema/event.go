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
// session's deletion outlives the session. Everything about an event is
// keyed by its session: its number counts within the session, and the
// feeds across sessions order by (xid, session_id, sequence); see
// docs/events.md.
type Event struct {
	ent.Schema
}

// Fields of the Event.
func (Event) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("id", uuid.UUID{}).Default(newID).Immutable(),
		field.Int64("sequence").Positive().Immutable().
			Comment("The event's number within its session: the session row's event_sequence, taken under its row lock, so a session's events commit in this order.").
			Annotations(entgql.OrderField("SEQUENCE")),
		field.UUID("session_id", uuid.UUID{}).Immutable(),
		field.Int64("xid").NonNegative().Immutable().
			Comment("The writing transaction's id (pg_current_xact_id), raised to the session's previous event's xid when that is higher: it never decreases within a session, and an event whose xid is below the snapshot horizon is final.").
			Annotations(entgql.Skip()),
		field.String("tenant").Immutable().
			Comment("Copied from the session so that feeds filter by tenant without a join."),
		field.String("kind").NotEmpty().MaxLen(100).Immutable(),
		field.Int("turn").Optional().Nillable().NonNegative().Immutable().
			Comment("The session's turn the event belongs to: the turn its payload names when it names one, else the session's current turn when it was written (the turn open or last begun); null before the session's first turn and for the system session's events. A reset keeps the numbering, so its event and those after it carry the last turn's number until the next turn begins."),
		field.JSON("payload", map[string]any{}).Immutable().
			Annotations(entgql.Type("Map")),
		field.Time("created_at").Default(time.Now).Immutable().
			Annotations(entgql.OrderField("CREATED_AT")),
	}
}

// Indexes of the Event.
func (Event) Indexes() []ent.Index {
	return []ent.Index{
		// A session's events in id order, as its connection pages them by
		// default (WHERE session_id = $1 ORDER BY id LIMIT n): the primary
		// key is (id, session_id), which only a walk of the whole key
		// would read in that order.
		index.Fields("session_id", "id"),
		// A session's events, in order: subscriptions replay from it.
		index.Fields("session_id", "sequence").Unique(),
		// A turn's events, in order: the dashboard's trace reads them
		// (WHERE session_id = $1 AND turn = $2 ORDER BY sequence).
		index.Fields("session_id", "turn", "sequence"),
		// The feeds across sessions, in order below the snapshot horizon.
		index.Fields("xid", "session_id", "sequence"),
	}
}

// Annotations of the Event.
func (Event) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.RelayConnection(),
		entgql.MultiOrder(),
	}
}
