package engine

import (
	"context"

	"sessiongraph/ent"
	"sessiongraph/ent/ref"
	"sessiongraph/ent/schema/schematype"
	"sessiongraph/internal/apperr"
)

// recentEntities is how many referenced entities working memory keeps
// (the last 20).
const recentEntities = 20

// WorkingMemory is a session's compact state.
type WorkingMemory struct {
	TurnCount      int
	Focus          *schematype.Focus
	RecentEntities []*RecentEntity
	Summary        string
	// ShouldSummarize is true every everyNTurns turns: time to refresh the history summary.
	ShouldSummarize bool
}

// RecentEntity is one referenced entity of working memory.
type RecentEntity struct {
	EntityType string
	Ref        string
	Label      string
	Turn       int
}

// WorkingMemory returns the session's turn count, focus, the 20 most
// recently referenced entities and its summary, in one statement.
func (rd *Reads) WorkingMemory(ctx context.Context, s *ent.Session, everyNTurns int) (*WorkingMemory, error) {
	if everyNTurns < 1 {
		return nil, apperr.Invalid("everyNTurns", "everyNTurns must be at least 1, got %d", everyNTurns)
	}
	rows, err := rd.client.Ref.Query().Where(ref.SessionID(s.ID)).
		Order(ent.Desc(ref.FieldTurnLastReferenced), ent.Desc(ref.FieldUpdatedAt), ent.Asc(ref.FieldRef)).
		Limit(recentEntities).All(ctx)
	if err != nil {
		return nil, err
	}
	m := &WorkingMemory{
		TurnCount: s.CurrentTurn, Focus: s.Focus, Summary: s.HistorySummary,
		ShouldSummarize: s.CurrentTurn > 0 && s.CurrentTurn%everyNTurns == 0,
		RecentEntities:  make([]*RecentEntity, len(rows)),
	}
	for i, r := range rows {
		m.RecentEntities[i] = &RecentEntity{EntityType: r.EntityType, Ref: r.Ref, Label: r.Label, Turn: r.TurnLastReferenced}
	}
	return m, nil
}
