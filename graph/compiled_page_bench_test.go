package graph_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
)

// The one-row page benchmarks: the session graph page and the ids page as a
// client asks them when it selects no cursor, so that the page is one
// statement returning its sessions' values (ent's CompiledEdges; the name
// is from when PostgreSQL wrote the page's JSON as one row). Besides the
// process's costs each reports PostgreSQL's for the page's statement: the
// fastest of 31 EXPLAIN ANALYZE runs and its shared buffer hits, which do
// not depend on the machine's load.

// sessionGraphOneRow is the session graph page without endCursor.
var sessionGraphOneRow = strings.Replace(sessionGraphPage, "pageInfo { hasNextPage endCursor }", "pageInfo { hasNextPage }", 1)

// BenchmarkSessionGraphOneRow serves the 620-object page without cursors.
func BenchmarkSessionGraphOneRow(b *testing.B) {
	rec := &apitest.Recorder{}
	s := apitest.New(b, apitest.Recording(rec))
	apitest.SessionGraph(b, s, "acme", 20, 10, 20)
	benchOneRowPage(b, s, rec, sessionGraphOneRow, 620)
}

// BenchmarkSessionGraphOneRowGrown serves the same page from a grown,
// ANALYZEd database (apitest.NewGrown).
func BenchmarkSessionGraphOneRowGrown(b *testing.B) {
	rec := &apitest.Recorder{}
	g := apitest.NewGrown(b, apitest.Recording(rec))
	apitest.SessionGraph(b, g.Server, "acme", 20, 10, 20)
	benchOneRowPage(b, g.Server, rec, sessionGraphOneRow, 620)
}

// BenchmarkSessionIDsOneRowGrown serves sessions(first: 20){ id } from a
// grown database.
func BenchmarkSessionIDsOneRowGrown(b *testing.B) {
	rec := &apitest.Recorder{}
	g := apitest.NewGrown(b, apitest.Recording(rec))
	benchOneRowPage(b, g.Server, rec, sessionIDsPage, 20)
}

// BenchmarkSessionGraphPageByGqlgen serves the session graph page of 620
// objects with compiled reads off: what gqlgen's own execution costs for
// what compiled reads decline, and so what the execution patches of
// patches/ are worth (docs/generated-code.md).
func BenchmarkSessionGraphPageByGqlgen(b *testing.B) {
	s := apitest.New(b, func(c *app.Config) { c.CompiledReads = false })
	apitest.SessionGraph(b, s, "acme", 20, 10, 20)
	h := handlerClient{s: s}
	require.Equal(b, 620, countPageObjects(b, h.post(b, sessionGraphPage, nil)))
	for range 20 {
		h.post(b, sessionGraphPage, nil)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		h.post(b, sessionGraphPage, nil)
	}
}

// benchOneRowPage serves query b.N times and reports per page the
// process's CPU and allocations, the statements sent, and PostgreSQL's
// time and buffer hits for them.
func benchOneRowPage(b *testing.B, s *apitest.Server, rec *apitest.Recorder, query string, objects int) {
	h := handlerClient{s: s}
	body := h.post(b, query, nil)
	var page struct {
		Data struct {
			Sessions struct{ Edges []json.RawMessage } `json:"sessions"`
		} `json:"data"`
	}
	require.NoError(b, json.Unmarshal(body, &page))
	require.Len(b, page.Data.Sessions.Edges, 20)
	if objects > 20 {
		require.Equal(b, objects, countPageObjects(b, body))
	}
	for range 20 {
		h.post(b, query, nil)
	}
	m := startMeter(s)
	b.ResetTimer()
	for range b.N {
		h.post(b, query, nil)
	}
	b.StopTimer()
	m.report(b, b.N, 1, "page")
	b.ReportMetric(float64(m.statements)/float64(b.N), "statements/page")
	stmts := rec.Record(func() { h.post(b, query, nil) })
	require.Len(b, stmts, 1)
	took, ran, hits := statementCost(b, s, stmts[0])
	b.ReportMetric(took.Seconds()*1e6, "pg-µs/page")
	b.ReportMetric(ran.Seconds()*1e6, "pg-exec-µs/page")
	b.ReportMetric(float64(hits), "pg-hits/page")
}

// statementCost is the shortest time PostgreSQL took to plan and run the
// statement in 31 EXPLAIN ANALYZE runs, the shortest it took to run it
// (the server's pool keeps its statements prepared, so a page that sends
// no arguments is planned once per connection, not per page), and its
// execution's shared buffer hits.
func statementCost(b *testing.B, s *apitest.Server, st apitest.Statement) (took, ran time.Duration, hits int64) {
	runs := make([]time.Duration, 31)
	execs := make([]time.Duration, 31)
	for i := range runs {
		var raw []byte
		require.NoError(b, s.DB.QueryRow("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "+st.Query, st.Args...).Scan(&raw))
		var plans []struct {
			Planning  float64 `json:"Planning Time"`
			Execution float64 `json:"Execution Time"`
			Plan      struct {
				Hits int64 `json:"Shared Hit Blocks"`
			} `json:"Plan"`
		}
		require.NoError(b, json.Unmarshal(raw, &plans))
		runs[i] = time.Duration((plans[0].Planning + plans[0].Execution) * float64(time.Millisecond))
		execs[i] = time.Duration(plans[0].Execution * float64(time.Millisecond))
		hits = plans[0].Plan.Hits
	}
	return slices.Min(runs), slices.Min(execs), hits
}
