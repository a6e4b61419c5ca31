package graph_test

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"

	"entgo.io/ent/dialect"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
	"sessiongraph/internal/dbhook"
)

// maxHops bounds the calls from a resolver to the statement it sends: a
// reader follows a request from the resolver to its SQL in at most this
// many jumps (docs/architecture.md lists them).
const maxHops = 8

// hopTrace records, for each resolver that sent statements, the deepest
// chain of our calls from the resolver to a statement.
type hopTrace struct {
	mu      sync.Mutex
	deepest map[string][]string // resolver → the calls below it, outermost first
	// frames counts, for each resolver, the most frames of any code
	// (ent's generated client and library included) between it and the
	// driver wrapper: the count the hops are not.
	frames map[string]int
}

// ours reports whether a frame is hand-written sessiongraph code on the way
// from a resolver to the database: not ent's generated client (the
// statement leaves our code where it enters ent), not the driver wrappers
// below it (dbhook, tracing, the test server's counters), not this test.
func ours(function string) bool {
	if !strings.HasPrefix(function, "sessiongraph/") {
		return false
	}
	for _, below := range []string{"sessiongraph/ent.", "sessiongraph/ent/", "sessiongraph/internal/dbhook.",
		"sessiongraph/internal/tracing.", "sessiongraph/internal/apitest.", "sessiongraph/graph_test."} {
		if strings.HasPrefix(function, below) {
			return false
		}
	}
	return true
}

// statement notes the stack of one statement: the calls of ours between the
// resolver that caused it and the statement.
func (h *hopTrace) statement() {
	pcs := make([]uintptr, 128)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	var calls []string // innermost first
	below := 0         // frames since the outermost driver wrapper
	for {
		f, more := frames.Next()
		if strings.HasPrefix(f.Function, "sessiongraph/graph.(*") && strings.Contains(f.Function, "Resolver).") {
			slicesReverse(calls)
			h.mu.Lock()
			if len(calls) >= len(h.deepest[f.Function]) {
				h.deepest[f.Function] = calls
			}
			h.frames[f.Function] = max(h.frames[f.Function], below)
			h.mu.Unlock()
			return
		}
		below++
		if strings.HasPrefix(f.Function, "sessiongraph/internal/dbhook.") {
			below = 0
		}
		if ours(f.Function) {
			calls = append(calls, f.Function)
		}
		if !more {
			return // not a resolver's statement (authentication, the hub)
		}
	}
}

func slicesReverse(s []string) {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}

// hops is the number of calls from the resolver to the statement: one
// into each function of ours on the way, and the last into ent.
func hops(calls []string) int { return len(calls) + 1 }

// tracedServer is a server whose every statement, while traceStatements
// is on, records the calls that led to it in trace.
func tracedServer(t *testing.T) (s *apitest.Server, trace *hopTrace, traceStatements func(on bool)) {
	trace = &hopTrace{deepest: map[string][]string{}, frames: map[string]int{}}
	var on sync.Mutex
	tracing := false
	s = apitest.New(t, func(c *app.Config) {
		inner := c.WrapDriver
		c.WrapDriver = func(d dialect.Driver) dialect.Driver {
			d = dbhook.Wrap(d, func(ctx context.Context, _ dbhook.Kind, _ string, run func(context.Context) error) error {
				on.Lock()
				now := tracing
				on.Unlock()
				if now {
					trace.statement()
				}
				return run(ctx)
			})
			if inner != nil {
				d = inner(d)
			}
			return d
		}
	})
	return s, trace, func(now bool) {
		on.Lock()
		tracing = now
		on.Unlock()
	}
}

// TestRequestsReachTheirSQLInAFewHops follows recordRead (with a step, so
// that its items join the step's result) and a THINK build from the
// resolver to every statement they send, through the real server, and
// holds each to maxHops: the write path reads top to bottom (begin, read,
// decide, commit), with no callback from the store into the engine.
func TestRequestsReachTheirSQLInAFewHops(t *testing.T) {
	s, trace, traceStatements := tracedServer(t)
	a := kitchenSession(t, s)
	traceStatements(true)
	a.do(`mutation($id: ID!, $r: [Map!]!) { recordRead(input: {sessionID: $id, table: "recipes", records: $r, step: 1}) { records } }`,
		map[string]any{"r": []map[string]any{{"id": newUUID(), "name": "Dal Tadka"}}})
	think := a.context("THINK", nil) // the read above changed the session: a fresh build
	traceStatements(false)
	require.NotEmpty(t, think.Text)

	for _, resolver := range []string{"sessiongraph/graph.(*mutationResolver).RecordRead", "sessiongraph/graph.(*sessionResolver).Context"} {
		calls, ok := trace.deepest[resolver]
		require.True(t, ok, "%s sent no statement", resolver)
		t.Logf("%s: %d hops (%d frames of any code): %s", resolver, hops(calls), trace.frames[resolver], strings.Join(calls, " → "))
		assert.LessOrEqual(t, hops(calls), maxHops, "%s reaches its deepest statement through %s", resolver, strings.Join(calls, " → "))
	}
}
