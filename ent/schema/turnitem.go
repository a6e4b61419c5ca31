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

// TurnItem is one item of a turn as the agent produced it: a message of
// any role, a function (tool) call, its output, a reasoning item, or
// another item of the Responses API's shape. Its JSON is kept as it was
// sent, byte for byte, and the fields the server reads are parsed from it
// (docs/api.md, "Items"). The turn's user and assistant messages
// (beginTurn, endTurn) are items too, made from the turn's row; only
// recorded items are rows here.
type TurnItem struct {
	ent.Schema
}

// Fields of the TurnItem.
func (TurnItem) Fields() []ent.Field {
	return []ent.Field{
		field.UUID("id", uuid.UUID{}).Default(newID).Immutable(),
		field.UUID("session_id", uuid.UUID{}).Immutable(),
		field.Int("turn").Positive().Immutable().
			Comment("The number of the turn the item belongs to."),
		field.Int("position").Positive().Immutable().
			Comment("The item's place among the turn's recorded items, from 1."),
		field.Enum("kind").NamedValues("Message", "MESSAGE", "FunctionCall", "FUNCTION_CALL",
			"FunctionCallOutput", "FUNCTION_CALL_OUTPUT", "Reasoning", "REASONING", "Other", "OTHER").Immutable(),
		field.String("role").Default("").Immutable().
			Comment("A message's role (system, developer, user, assistant, tool); empty for other kinds."),
		field.Text("name").Default("").Immutable(),
		field.Text("call_id").Default("").Immutable(),
		field.Text("arguments").Default("").Immutable(),
		field.Text("content").Default("").Immutable().
			Comment("The item's text as a model reads it: a message's text parts, a call's output, a reasoning summary."),
		field.Text("json").Immutable().
			Comment("The item exactly as it was sent."),
		field.Int("tokens").Default(0).NonNegative().Immutable().
			Comment("The item's tokens by the session's tokenizer: its content, or a call's name and arguments."),
		field.Time("created_at").Default(time.Now).Immutable(),
	}
}

// Edges of the TurnItem.
func (TurnItem) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("session", Session.Type).Ref("turn_items").Field("session_id").Unique().Required().Immutable(),
	}
}

// Indexes of the TurnItem.
func (TurnItem) Indexes() []ent.Index {
	return []ent.Index{
		// A turn's items in order, and the next position under the session's lock.
		index.Fields("session_id", "turn", "position").Unique(),
		// The search of what the items say (itemContainsFold): the text a
		// model reads, a call's tool name and its arguments.
		searchable("content", "turn_item_content_trgm"),
		searchable("name", "turn_item_name_trgm"),
		searchable("arguments", "turn_item_arguments_trgm"),
	}
}

// Annotations of the TurnItem: GraphQL shows items through Turn.items
// (graph/schema), with the turn's messages among them, not as nodes.
func (TurnItem) Annotations() []schema.Annotation {
	return []schema.Annotation{entgql.Skip(entgql.SkipAll)}
}
