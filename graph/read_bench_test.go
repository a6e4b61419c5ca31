package graph_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// The read benchmarks serve requests through the server's real HTTP handler,
// called in this process without a socket, so that the process's CPU time is
// the server's own (GraphQL, ent, pgx; PostgreSQL's backends are other
// processes). Each prints CPU and allocations per returned object or build,
// so that a regression shows in make bench.

// sessionGraphPage is a frontend's session graph:
// 20 sessions, each with its first 10 turns and 20 refs.
const sessionGraphPage = `query SessionGraphPage {
  sessions(first: 20, orderBy: {field: CREATED_AT, direction: DESC}) {
    pageInfo { hasNextPage endCursor }
    edges { node {
      id externalKey status currentTurn lastActiveAt
      turns(first: 10) { edges { node { number userMessage status startedAt } } }
      refs(first: 20) { edges { node { ref entityType label } } }
    } }
  }
}`

// BenchmarkSessionGraphPage serves the session graph page of 620 objects
// (20 sessions, 200 turns, 400 refs) to one client at a time.
func BenchmarkSessionGraphPage(b *testing.B) {
	rec := &apitest.Recorder{}
	s := apitest.New(b, apitest.Recording(rec))
	apitest.SessionGraph(b, s, "acme", 20, 10, 20)
	benchSessionGraphPage(b, s, rec)
}

// BenchmarkSessionGraphPageGrown serves the same page of 620 objects from a
// grown database (apitest.NewGrown: 8,000 more sessions and half a million
// rows, most of them in 4 long sessions), ANALYZEd: what the page costs
// once the tables have grown, to compare with BenchmarkSessionGraphPage.
func BenchmarkSessionGraphPageGrown(b *testing.B) {
	rec := &apitest.Recorder{}
	g := apitest.NewGrown(b, apitest.Recording(rec))
	apitest.SessionGraph(b, g.Server, "acme", 20, 10, 20)
	benchSessionGraphPage(b, g.Server, rec)
}

// benchSessionGraphPage serves the page b.N times, then reports besides the
// process's own costs what PostgreSQL spends on the page's statement: the
// fastest of 31 EXPLAIN ANALYZE runs (planning and execution), the page's
// own cost, which on a loaded machine the median is not.
func benchSessionGraphPage(b *testing.B, s *apitest.Server, rec *apitest.Recorder) {
	defer func() { b.ReportMetric(pageDatabaseTime(b, s, rec).Seconds()*1e6, "pg-µs/page") }()
	h := handlerClient{s: s}
	body := h.post(b, sessionGraphPage, nil) // warm the query cache
	objects := countPageObjects(b, body)
	require.Equal(b, 620, objects)
	for range 20 {
		h.post(b, sessionGraphPage, nil)
	}
	m := startMeter(s)
	b.ResetTimer()
	for range b.N {
		h.post(b, sessionGraphPage, nil)
	}
	b.StopTimer()
	m.report(b, b.N, objects, "object")
	b.ReportMetric(float64(len(body))/1024, "KB/page")
	b.ReportMetric(m.cpu.Seconds()*1e6/float64(b.N), "cpu-µs/page")
	b.ReportMetric(float64(m.statements)/float64(b.N), "statements/page")
}

// sessionIDsPage is the smallest list a client asks for: the ids of the
// first 20 sessions.
const sessionIDsPage = `{ sessions(first: 20) { edges { node { id } } } }`

// BenchmarkSessionIDsPage serves sessions(first: 20){ id } to one client at
// a time: what a request costs the server beyond its one statement.
func BenchmarkSessionIDsPage(b *testing.B) {
	s := apitest.New(b)
	apitest.SessionGraph(b, s, "acme", 20, 1, 1)
	h := handlerClient{s: s}
	for range 20 {
		h.post(b, sessionIDsPage, nil)
	}
	m := startMeter(s)
	b.ResetTimer()
	for range b.N {
		h.post(b, sessionIDsPage, nil)
	}
	b.StopTimer()
	m.report(b, b.N, 1, "page")
	b.ReportMetric(float64(m.statements)/float64(b.N), "statements/page")
}

// contextBuild asks for a build as an agent runtime does (cmd/loadgen's).
const contextBuild = `query Context($id: ID!, $node: ContextNode!, $options: ContextOptions) {
  session(id: $id) { context(node: $node, options: $options) {
    text tokenCount budget truncatedTurns notes
    sections { name tokenCount truncated }
    tiers { active generated retained }
  } }
}`

// contextClients is how many agents ask for builds at once.
const contextClients = 8

// BenchmarkContextBuilds serves THINK, ACT and REPLY builds to 8 clients at
// once, on a small session and a long one: builds per second and CPU per
// build, whose ratio between the two sizes is the growth. The session does
// not change, so after the first each build is the one the server
// remembers for its state; BenchmarkContextBuildsUncached makes each one.
func BenchmarkContextBuilds(b *testing.B) { benchContextBuilds(b, false) }

// BenchmarkContextBuildsUncached asks each build with a token budget of its
// own (8,000 plus a count), so that none is one the server remembers: what
// a build costs when the session changed since the last.
func BenchmarkContextBuildsUncached(b *testing.B) { benchContextBuilds(b, true) }

func benchContextBuilds(b *testing.B, uncached bool) {
	for _, size := range [][2]int{{100, 10}, {1000, 200}} {
		for _, node := range []string{"THINK", "ACT", "REPLY"} {
			b.Run(fmt.Sprintf("%s/refs=%d/turns=%d", node, size[0], size[1]), func(b *testing.B) {
				s := apitest.New(b)
				sess := apitest.ContextSession(b, s, size[0], size[1])
				h := handlerClient{s: s}
				vars := map[string]any{"id": sess.ID, "node": node}
				for range 10 {
					h.post(b, contextBuild, vars)
				}
				var budget atomic.Int64
				budget.Store(8000)
				build := func() {
					if !uncached {
						h.post(b, contextBuild, vars)
						return
					}
					h.post(b, contextBuild, map[string]any{"id": sess.ID, "node": node,
						"options": map[string]any{"tokenBudget": budget.Add(1)}})
				}
				var next atomic.Int64
				var wg sync.WaitGroup
				m := startMeter(s)
				start := time.Now()
				b.ResetTimer()
				for range contextClients {
					wg.Go(func() {
						for next.Add(1) <= int64(b.N) {
							build()
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				wall := time.Since(start)
				m.report(b, b.N, 1, "build")
				b.ReportMetric(float64(b.N)/wall.Seconds(), "builds/s")
				b.ReportMetric(float64(m.statements)/float64(b.N), "statements/build")
			})
		}
	}
}

// handlerClient posts operations straight to the server's handler.
type handlerClient struct{ s *apitest.Server }

// post runs one operation and returns its body, requiring that it
// succeeded.
func (c handlerClient) post(tb testing.TB, query string, vars map[string]any) []byte {
	payload, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	require.NoError(tb, err)
	req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(payload))
	req.Header.Set("Content-Type", "application/json")
	c.s.Authorize(req)
	rec := httptest.NewRecorder()
	c.s.Handler().ServeHTTP(rec, req)
	body := rec.Body.Bytes()
	if rec.Code != http.StatusOK || bytes.Contains(body, []byte(`"errors"`)) {
		tb.Fatalf("status %d: %.500s", rec.Code, body)
	}
	return body
}

// countPageObjects counts the sessions, turns and refs of a page.
func countPageObjects(tb testing.TB, body []byte) int {
	var page struct {
		Data struct {
			Sessions struct {
				Edges []struct {
					Node struct {
						Turns struct{ Edges []json.RawMessage } `json:"turns"`
						Refs  struct{ Edges []json.RawMessage } `json:"refs"`
					} `json:"node"`
				} `json:"edges"`
			} `json:"sessions"`
		} `json:"data"`
	}
	require.NoError(tb, json.Unmarshal(body, &page))
	n := 0
	for _, e := range page.Data.Sessions.Edges {
		n += 1 + len(e.Node.Turns.Edges) + len(e.Node.Refs.Edges)
	}
	return n
}

// meter reads the process's CPU time, allocations and the server's
// statements over a benchmark's loop.
type meter struct {
	s                     *apitest.Server
	cpu                   time.Duration
	mallocs, bytes        uint64
	statements            int64
	startCPU              time.Duration
	startMallocs, startBy uint64
	startStatements       int64
}

func startMeter(s *apitest.Server) *meter {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return &meter{s: s, startCPU: processCPU(), startMallocs: ms.Mallocs, startBy: ms.TotalAlloc, startStatements: s.Statements()}
}

// report stops the meter and prints CPU, allocations and bytes per unit
// (ops operations of perOp units each).
func (m *meter) report(b *testing.B, ops, perOp int, unit string) {
	m.cpu = processCPU() - m.startCPU
	m.statements = m.s.Statements() - m.startStatements
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m.mallocs, m.bytes = ms.Mallocs-m.startMallocs, ms.TotalAlloc-m.startBy
	units := float64(ops * perOp)
	b.ReportMetric(m.cpu.Seconds()*1e6/units, "cpu-µs/"+unit)
	b.ReportMetric(float64(m.mallocs)/units, "allocs/"+unit)
	b.ReportMetric(float64(m.bytes)/units, "B/"+unit)
}

// processCPU is the user and system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// pageDatabaseTime is the shortest time PostgreSQL took to plan and run the
// statements of one session graph page in 31 EXPLAIN ANALYZE runs.
func pageDatabaseTime(b *testing.B, s *apitest.Server, rec *apitest.Recorder) time.Duration {
	h := handlerClient{s: s}
	stmts := rec.Record(func() { h.post(b, sessionGraphPage, nil) })
	runs := make([]time.Duration, 31)
	for i := range runs {
		for _, st := range stmts {
			var raw []byte
			require.NoError(b, s.DB.QueryRow("EXPLAIN (ANALYZE, FORMAT JSON) "+st.Query, st.Args...).Scan(&raw))
			var plans []struct {
				Planning  float64 `json:"Planning Time"`
				Execution float64 `json:"Execution Time"`
			}
			require.NoError(b, json.Unmarshal(raw, &plans))
			runs[i] += time.Duration((plans[0].Planning + plans[0].Execution) * float64(time.Millisecond))
		}
	}
	return slices.Min(runs)
}
