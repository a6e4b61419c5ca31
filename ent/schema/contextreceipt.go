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

	"sessiongraph/ent/schema/schematype"
)

// ContextReceipt is a context build as it was sent to the model: what the
// runtime built for a node at a turn, recorded when it asks (recordContext),
// so that an admin can see what the model saw and how it changed from turn
// to turn (README, "Context receipts").
type ContextReceipt struct {
	ent.Schema
}

// Fields of the ContextReceipt.
func (ContextReceipt) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("id", uuid.UUID{}).Default(newID).Immutable(),
		field.UUID("session_id", uuid.UUID{}).Immutable(),
		field.Int("turn").NonNegative().Immutable().
			Comment("The session's current turn when the build was made.").
			Annotations(entgql.OrderField("TURN")),
		field.String("node").GoType(schematype.Node("")).Immutable().
			Annotations(entgql.Type("ContextNode")),
		field.Int64("event_sequence").Immutable().
			Comment("The session's event sequence the build was made from: the state it shows."),
		field.Int("budget").Immutable(),
		field.String("tokenizer").Immutable(),
		field.Int("token_count").Immutable(),
		field.JSON("sections", []schematype.ReceiptSection{}).Immutable().
			Comment("Each section in priority order with its token count and whether it was cut; its text is in text.").
			Annotations(entgql.Type("[ContextReceiptSection!]")),
		field.JSON("tiers", schematype.Tiers{}).Immutable().
			Comment("The refs of each tier the build showed.").
			Annotations(entgql.Type("ContextTiers")),
		field.Int("truncated_turns").Immutable(),
		field.JSON("notes", []string{}).Immutable().
			Comment("What was cut and why."),
		field.Text("text").Optional().Nillable().
			Comment("The text sent; null when the server keeps only its hash (-receipt-hash-only, or once -receipt-text-retention has passed)."),
		field.String("text_sha256").Immutable().
			Comment("SHA-256 of the text, hex: proves what was sent after the text is gone."),
		field.Time("created_at").Default(time.Now).Immutable().
			Annotations(entgql.OrderField("CREATED_AT")),
	}
}

// Edges of the ContextReceipt.
func (ContextReceipt) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("session", Session.Type).Ref("context_receipts").Field("session_id").Unique().Required().Immutable(),
	}
}

// Indexes of the ContextReceipt.
func (ContextReceipt) Indexes() []ent.Index {
	return []ent.Index{
		// A session's context receipts in id order, as its connection pages them by
		// default (WHERE session_id = $1 ORDER BY id LIMIT n): the primary
		// key is (id, session_id), which only a walk of the whole key
		// would read in that order.
		index.Fields("session_id", "id"),
		// A turn's receipts, and one node's across the session's turns.
		index.Fields("session_id", "turn", "node"),
		index.Fields("session_id", "node", "turn"),
	}
}

// Annotations of the ContextReceipt.
func (ContextReceipt) Annotations() []schema.Annotation {
	return []schema.Annotation{
		entgql.RelayConnection(),
		entgql.MultiOrder(),
	}
}
