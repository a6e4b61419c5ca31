package graph_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
	"sessiongraph/internal/engine"
)

const (
	loopRead = `mutation($id: ID!, $records: [Map!]!) {
  recordRead(input: {sessionID: $id, table: "recipes", records: $records}) { records refs { ref } } }`
	loopThink = `query($id: ID!) { session(id: $id) { context(node: THINK) {
  text tokenCount budget sections { name tokenCount truncated } tiers { active generated retained } } } }`
	// loopReadThink is the loop's write with its build in the answer.
	loopReadThink = `mutation($id: ID!, $records: [Map!]!) {
  recordRead(input: {sessionID: $id, table: "recipes", records: $records}) { records refs { ref } context(node: THINK) {
  text tokenCount budget sections { name tokenCount truncated } tiers { active generated retained } } } }`
)

// loopSession opens a session with 10 turns of 10 recipe reads each and
// begins its 11th turn: an agent's session midway.
func loopSession(b *testing.B, s *apitest.Server, key string) string {
	recipes := "recipes"
	ctx := access.System(context.Background())
	opened, err := s.Engine.Sessions.OpenSession(ctx, engine.OpenSessionInput{Tenant: "bench", ExternalKey: key})
	require.NoError(b, err)
	id := opened.Session.ID
	for turn := 1; turn <= 11; turn++ {
		_, err := s.Engine.Turns.BeginTurn(ctx, id, fmt.Sprintf("turn %d: what can I cook tonight with leeks?", turn))
		require.NoError(b, err)
		if turn == 11 {
			break
		}
		var records []map[string]any
		for i := range 10 {
			records = append(records, map[string]any{"id": uuid.NewString(), "name": fmt.Sprintf("Recipe %d.%d", turn, i), "cuisine": "french", "total_time": 40})
		}
		_, err = s.Engine.Writes.RecordRead(ctx, engine.RecordReadInput{SessionID: id, Table: &recipes, Records: records})
		require.NoError(b, err)
		_, err = s.Engine.Turns.EndTurn(ctx, engine.EndTurnInput{SessionID: id, AssistantMessage: fmt.Sprintf("Turn %d: a leek gratin, or a soup.", turn)})
		require.NoError(b, err)
	}
	return id.String()
}

// BenchmarkWriteThenBuild is an agent's usual loop: a small write (a read
// of two records of the 21 its turn reads again and again) then a THINK
// build, by 1
// and 8 clients at once, each on a session of its own. Every build follows
// a write, so none is one the server remembers as it was.
func BenchmarkWriteThenBuild(b *testing.B) { writeThenBuild(b, false) }

// BenchmarkWriteWithBuild is the same loop as one request: the write asks
// for the THINK build in its answer, as a runtime that builds after every
// write sends it.
func BenchmarkWriteWithBuild(b *testing.B) { writeThenBuild(b, true) }

// BenchmarkWriteWithBuildGrown is BenchmarkWriteWithBuild on a clone of
// the grown database (apitest.NewGrown: thousands of sessions, half a
// million turns and refs, ANALYZEd): the loop's sessions are new ones
// among them, as a deployment's agents' are.
func BenchmarkWriteWithBuildGrown(b *testing.B) {
	writeThenBuildOn(b, true, func(b *testing.B) *apitest.Server { return apitest.NewGrown(b).Server })
}

// BenchmarkWriteWithBuildWholePool is BenchmarkWriteWithBuild with the
// loop's one API key holding the whole connection pool. By default a key
// may hold half of it, so that another key always finds room
// (docs/fairness.md): 8 clients of one key then have 4 connections, and
// the cores wait on commits' flushes. This measures the path, as a server
// without per-key shares runs it.
func BenchmarkWriteWithBuildWholePool(b *testing.B) {
	writeThenBuildOn(b, true, func(b *testing.B) *apitest.Server {
		return apitest.New(b, func(c *app.Config) { c.Fairness.KeyPoolShare, c.Fairness.TenantPoolShare = 100, 100 })
	})
}

func writeThenBuild(b *testing.B, inAnswer bool) {
	writeThenBuildOn(b, inAnswer, func(b *testing.B) *apitest.Server { return apitest.New(b) })
}

func writeThenBuildOn(b *testing.B, inAnswer bool, server func(*testing.B) *apitest.Server) {
	for _, clients := range []int{1, 8} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			s := server(b)
			h := handlerClient{s: s}
			ids := make([]string, clients)
			known := make([]string, clients)
			pool := make([][]string, clients) // the records a turn reads again and again
			for i := range ids {
				for range 20 {
					pool[i] = append(pool[i], uuid.NewString())
				}
				ids[i] = loopSession(b, s, fmt.Sprintf("loop-%d", i))
				known[i] = uuid.NewString()
				h.post(b, loopRead, map[string]any{"id": ids[i], "records": []any{map[string]any{"id": known[i], "name": "Leek gratin", "cuisine": "french"}}})
				h.post(b, loopThink, map[string]any{"id": ids[i]})
			}
			var next atomic.Int64
			var wg sync.WaitGroup
			m := startMeter(s)
			start := time.Now()
			b.ResetTimer()
			for c := range clients {
				wg.Go(func() {
					for n := next.Add(1); n <= int64(b.N); n = next.Add(1) {
						vars := map[string]any{"id": ids[c], "records": []any{
							map[string]any{"id": known[c], "name": "Leek gratin", "cuisine": "french"},
							map[string]any{"id": pool[c][n%20], "name": fmt.Sprintf("Leek soup %d", n%20), "cuisine": "french", "total_time": 30},
						}}
						if inAnswer {
							h.post(b, loopReadThink, vars)
							continue
						}
						h.post(b, loopRead, vars)
						h.post(b, loopThink, map[string]any{"id": ids[c]})
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			wall := time.Since(start)
			m.report(b, b.N, 1, "loop")
			b.ReportMetric(float64(b.N)/wall.Seconds(), "loops/s")
			b.ReportMetric(float64(m.statements)/float64(b.N), "statements/loop")
		})
	}
}
