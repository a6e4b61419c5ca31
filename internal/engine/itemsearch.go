package engine

// This file holds the search of a turn's items (TurnWhereInput's
// itemContainsFold): a client finds turns, and sessions through
// hasTurnsWith, by what their items say, as it finds them by their
// messages.

import (
	entsql "entgo.io/ent/dialect/sql"

	"sessiongraph/ent"
	"sessiongraph/ent/predicate"
	"sessiongraph/ent/turn"
	"sessiongraph/ent/turnitem"
)

// TurnsWithItemContaining matches turns with a recorded item whose text (a
// message's, a call's output), tool name or arguments contains text, in any
// case. It is a subquery on the turn's own items (turn_items (session_id,
// turn)), which keeps to the session's shard on Citus; each column's
// trigram index finds the matching items of a grown table.
func TurnsWithItemContaining(text string) predicate.Turn {
	return func(s *entsql.Selector) {
		items := entsql.Table(turnitem.Table)
		s.Where(entsql.Exists(entsql.Select(items.C(turnitem.FieldID)).From(items).Where(entsql.And(
			entsql.ColumnsEQ(items.C(turnitem.FieldSessionID), s.C(turn.FieldSessionID)),
			entsql.ColumnsEQ(items.C(turnitem.FieldTurn), s.C(turn.FieldNumber)),
			entsql.Or(
				containsFold(items.C(turnitem.FieldContent), text),
				containsFold(items.C(turnitem.FieldName), text),
				containsFold(items.C(turnitem.FieldArguments), text),
			)))))
	}
}

// FilterItemText adds TurnsWithItemContaining to a turns filter when text
// is given.
func FilterItemText(where *ent.TurnWhereInput, text *string) error {
	if text != nil {
		where.AddPredicates(TurnsWithItemContaining(*text))
	}
	return nil
}
