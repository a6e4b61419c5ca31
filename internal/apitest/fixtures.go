package apitest

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent"
	"sessiongraph/ent/schema/schematype"
	"sessiongraph/internal/access"
	"sessiongraph/internal/engine"
	"sessiongraph/internal/grown"
)

// Fixtures write rows directly: driving thousands of turns through the API
// would measure the setup, not the read a benchmark or a test is after.

// ContextSession opens a session with a history for context builds: turns
// with messages and summaries, refs spread evenly over the turns (an agent
// touches a few entities per turn), some retained, three pending generated
// recipes, and an open turn.
func ContextSession(tb testing.TB, s *Server, refs, turns int) *ent.Session {
	tb.Helper()
	ctx := access.System(context.Background())
	opened, err := s.Engine.Sessions.OpenSession(ctx, engine.OpenSessionInput{Tenant: "bench", ExternalKey: fmt.Sprintf("ctx-%d-%d", refs, turns)})
	require.NoError(tb, err)
	id := opened.Session.ID
	c := s.Client
	for start := 0; start < turns; start += 500 {
		bulk := []*ent.TurnCreate{}
		for n := start + 1; n <= min(start+500, turns); n++ {
			bulk = append(bulk, c.Turn.Create().SetSessionID(id).SetNumber(n).
				SetUserMessage(fmt.Sprintf("Turn %d: what can I cook tonight with what I have?", n)).SetUserTokens(14).
				SetAssistantMessage("You could make a curry or a pasta.").SetAssistantSummary("You could make a curry or a pasta.").SetAssistantTokens(9).
				SetStatus("COMPLETED").SetExecutionSummary(&schematype.ExecutionSummary{Decision: "plan_direct", Goal: "Suggest dinner", Phase: "exploring",
				Steps: []schematype.StepSummary{{Step: 1, Kind: "read", Description: "Read recipes", Outcome: "5 items"}}}))
		}
		require.NoError(tb, c.Turn.CreateBulk(bulk...).Exec(ctx))
	}
	for start := 0; start < refs; start += 1000 {
		bulk := []*ent.RefCreate{}
		for i := start; i < min(start+1000, refs); i++ {
			turn := i*turns/refs + 1
			r := c.Ref.Create().SetSessionID(id).SetRef(fmt.Sprintf("recipe_%d", i+1)).SetEntityType("recipe").
				SetEntityID(uuid.New()).SetLabel(fmt.Sprintf("Recipe number %d", i+1)).SetAction("read").
				SetTurnCreated(turn).SetTurnLastReferenced(turn)
			if i%(refs/5) == 0 { // a curated long-term memory stays small
				r.SetActiveReason("User keeps coming back to it")
			}
			bulk = append(bulk, r)
		}
		require.NoError(tb, c.Ref.CreateBulk(bulk...).Exec(ctx))
	}
	s.Client.Session.UpdateOneID(id).SetCurrentTurn(turns).SetRefCounters(map[string]int{"recipe": refs}).
		SetTokenCount(turns * 23).SetHistorySummary("The user plans weeknight dinners.").ExecX(ctx)
	for i := 0; i < 3; i++ {
		_, err := s.Engine.Writes.RecordGenerated(ctx, engine.RecordGeneratedInput{SessionID: id, EntityType: "recipe",
			Content: map[string]any{"name": fmt.Sprintf("Idea %d", i), "ingredients": []any{"rice", "peas"}, "instructions": "Cook."}})
		require.NoError(tb, err)
	}
	_, err = s.Engine.Turns.BeginTurn(ctx, id, "plan dinners for the week")
	require.NoError(tb, err)
	analyze(tb, s)
	sess, err := s.Engine.Sessions.Session(ctx, id)
	require.NoError(tb, err)
	return sess
}

// SessionGraph opens sessions sessions in tenant, each with turns completed
// turns and refs refs spread over them, as a frontend's session list shows
// them. The sessions are created one second apart, the first the oldest.
func SessionGraph(tb testing.TB, s *Server, tenant string, sessions, turns, refs int) []uuid.UUID {
	tb.Helper()
	ids, err := grown.SessionGraph(context.Background(), s.Engine.Sessions, s.Client, s.DB, tenant, sessions, turns, refs)
	require.NoError(tb, err)
	analyze(tb, s)
	return ids
}

// analyze gathers statistics on bulk-loaded tables, as autovacuum would in a
// live database.
func analyze(tb testing.TB, s *Server) {
	_, err := s.DB.ExecContext(context.Background(), `ANALYZE sessions; ANALYZE refs; ANALYZE turns; ANALYZE artifacts`)
	require.NoError(tb, err)
}
