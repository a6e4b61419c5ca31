package engine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"sessiongraph/ent"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/contextbuild"
)

func benchContext(b *testing.B, node contextbuild.Node, refs, turns int) {
	s := apitest.New(b)
	sess := apitest.ContextSession(b, s, refs, turns)
	ctx := access.System(context.Background())
	_, err := s.Engine.Builds.Context(ctx, sess, node, nil) // warm the domain cache and the tokenizer
	require.NoError(b, err)
	measure(b, s.DB, func(int) {
		out, err := s.Engine.Builds.ContextUncached(ctx, sess, node, nil)
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
			sess := apitest.ContextSession(b, s, 1000, 200)
			addSteps(b, s, sess, steps)
			ctx := access.System(context.Background())
			warm, err := s.Engine.Builds.Context(ctx, sess, contextbuild.Act, nil) // the domain cache and the tokenizer
			require.NoError(b, err)
			measure(b, s.DB, func(int) {
				out, err := s.Engine.Builds.ContextUncached(ctx, sess, contextbuild.Act, nil)
				require.NoError(b, err)
				require.NotEmpty(b, out.Text)
			})
			b.ReportMetric(float64(warm.TokenCount), "tokens")
		})
	}
}
