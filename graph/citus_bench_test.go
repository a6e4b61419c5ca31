package graph_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// agentTurnClients is how many agents take turns at once in
// BenchmarkAgentTurns.
const agentTurnClients = 8

// BenchmarkAgentTurns runs agent turns (beginTurn, recordRead of 20 records
// at step 1, endTurn) from 8 agents at once, each on its own session, and
// reports turns per second. Run on one PostgreSQL and, under make
// test-citus's TESTDB_CITUS_URL, on a Citus cluster, it is the cost of
// distribution on the write path (docs/scale-out.md).
func BenchmarkAgentTurns(b *testing.B) {
	s := apitest.New(b)
	h := handlerClient{s: s}
	ids := make([]string, agentTurnClients)
	records := make([][]map[string]any, agentTurnClients)
	for i := range ids {
		var out struct {
			OpenSession struct{ Session struct{ ID string } } `json:"openSession"`
		}
		s.MustDo(b, `mutation($k: String!) { openSession(input: {tenant: "acme", externalKey: $k}) { session { id } } }`,
			map[string]any{"k": fmt.Sprintf("agent-%d", i)}, &out)
		ids[i] = out.OpenSession.Session.ID
		for j := range 20 {
			records[i] = append(records[i], map[string]any{"id": uuid.NewString(), "name": fmt.Sprintf("Recipe %d", j)})
		}
	}
	turn := func(i int) {
		vars := map[string]any{"id": ids[i], "r": records[i]}
		h.post(b, `mutation($id: ID!) { beginTurn(input: {sessionID: $id, userMessage: "what can I cook?"}) { turn { number } } }`, vars)
		h.post(b, `mutation($id: ID!, $r: [Map!]!) { recordRead(input: {sessionID: $id, table: "recipes", records: $r, step: 1}) { records } }`, vars)
		h.post(b, `mutation($id: ID!) { endTurn(input: {sessionID: $id, assistantMessage: "Here are twenty recipes."}) { turn { number } } }`, vars)
	}
	for i := range ids {
		turn(i) // warm the query cache and the sessions' refs
	}
	b.ResetTimer()
	started := time.Now()
	var wg sync.WaitGroup
	for i := range agentTurnClients {
		wg.Go(func() {
			for n := i; n < b.N; n += agentTurnClients {
				turn(i)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(started)
	b.StopTimer()
	require.Positive(b, elapsed)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "turns/s")
}
