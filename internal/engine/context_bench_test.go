package engine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent"
	"sessiongraph/ent/schema/schematype"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/contextbuild"
	"sessiongraph/internal/engine"
)

// contextFixture bulk-inserts a session's history: turns with messages and
// summaries, and refs spread evenly over the turns (an agent touches a few
// entities per turn), some retained, some generated. It writes rows directly
// because driving thousands of turns through the API would measure setup,
// not the build.
func contextFixture(b *testing.B, s *apitest.Server, refs, turns int) *ent.Session {
	ctx := access.System(context.Background())
	opened, err := s.Engine.OpenSession(ctx, engine.OpenSessionInput{Tenant: "bench", ExternalKey: fmt.Sprintf("ctx-%d-%d", refs, turns)})
	require.NoError(b, err)
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
		require.NoError(b, c.Turn.CreateBulk(bulk...).Exec(ctx))
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
		require.NoError(b, c.Ref.CreateBulk(bulk...).Exec(ctx))
	}
	s.Client.Session.UpdateOneID(id).SetCurrentTurn(turns).SetRefCounters(map[string]int{"recipe": refs}).
		SetTokenCount(turns * 23).SetHistorySummary("The user plans weeknight dinners.").ExecX(ctx)
	for i := 0; i < 3; i++ {
		_, err := s.Engine.RecordGenerated(ctx, engine.RecordGeneratedInput{SessionID: id, EntityType: "recipe",
			Content: map[string]any{"name": fmt.Sprintf("Idea %d", i), "ingredients": []any{"rice", "peas"}, "instructions": "Cook."}})
		require.NoError(b, err)
	}
	_, err = s.Engine.BeginTurn(ctx, id, "plan dinners for the week")
	require.NoError(b, err)
	// Bulk-loaded tables have no statistics yet; autovacuum would gather
	// them in a live database.
	_, err = s.DB.ExecContext(ctx, `ANALYZE refs; ANALYZE turns; ANALYZE artifacts`)
	require.NoError(b, err)
	sess, err := s.Engine.Session(ctx, id)
	require.NoError(b, err)
	return sess
}

func benchContext(b *testing.B, node contextbuild.Node, refs, turns int) {
	s := apitest.New(b)
	sess := contextFixture(b, s, refs, turns)
	ctx := access.System(context.Background())
	_, err := s.Engine.Context(ctx, sess, node, nil) // warm the domain cache and the tokenizer
	require.NoError(b, err)
	measure(b, s.DB, func(int) {
		out, err := s.Engine.Context(ctx, sess, node, nil)
		require.NoError(b, err)
		require.NotEmpty(b, out.Text)
	})
}

func BenchmarkContextThink(b *testing.B) {
	for _, size := range [][2]int{{100, 20}, {1000, 200}, {10000, 2000}} {
		b.Run(fmt.Sprintf("refs=%d/turns=%d", size[0], size[1]), func(b *testing.B) { benchContext(b, contextbuild.Think, size[0], size[1]) })
	}
}

func BenchmarkContextAct(b *testing.B) {
	for _, size := range [][2]int{{100, 20}, {1000, 200}, {10000, 2000}} {
		b.Run(fmt.Sprintf("refs=%d/turns=%d", size[0], size[1]), func(b *testing.B) { benchContext(b, contextbuild.Act, size[0], size[1]) })
	}
}

// addSteps bulk-inserts n step results over the session's newest turns,
// three per turn, each a read of five recipes as recordRead would leave it.
func addSteps(b *testing.B, s *apitest.Server, sess *ent.Session, n int) {
	ctx := access.System(context.Background())
	bulk := make([]*ent.StepResultCreate, 0, n)
	for i := 0; i < n; i++ {
		turn, step := sess.CurrentTurn-i/3, i%3+1
		var data []any
		var refs []string
		for j := 1; j <= 5; j++ {
			ref := fmt.Sprintf("recipe_%d", (i*5+j)%1000+1)
			refs = append(refs, ref)
			data = append(data, map[string]any{"id": ref, "name": fmt.Sprintf("Recipe number %d", i*5+j), "cuisine": "indian", "total_time": 45})
		}
		bulk = append(bulk, s.Client.StepResult.Create().SetSessionID(sess.ID).SetTurn(turn).SetStep(step).SetKind("READ").
			SetDescription(fmt.Sprintf("Find recipes for step %d", step)).SetData(data).SetRefs(refs).SetItemCount(len(data)))
	}
	require.NoError(b, s.Client.StepResult.CreateBulk(bulk...).Exec(ctx))
	_, err := s.DB.ExecContext(ctx, `ANALYZE step_results`)
	require.NoError(b, err)
}

// BenchmarkContextActSteps is the ACT build of the same session with no
// step results and with 50 (three shown in full, twenty summarized, the
// rest left in the table), measured in the same run.
func BenchmarkContextActSteps(b *testing.B) {
	for _, steps := range []int{0, 50} {
		b.Run(fmt.Sprintf("refs=1000/turns=200/steps=%d", steps), func(b *testing.B) {
			s := apitest.New(b)
			sess := contextFixture(b, s, 1000, 200)
			addSteps(b, s, sess, steps)
			ctx := access.System(context.Background())
			warm, err := s.Engine.Context(ctx, sess, contextbuild.Act, nil) // the domain cache and the tokenizer
			require.NoError(b, err)
			measure(b, s.DB, func(int) {
				out, err := s.Engine.Context(ctx, sess, contextbuild.Act, nil)
				require.NoError(b, err)
				require.NotEmpty(b, out.Text)
			})
			b.ReportMetric(float64(warm.TokenCount), "tokens")
		})
	}
}
