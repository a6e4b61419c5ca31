package graph_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
	"sessiongraph/internal/dbhook"
)

// maxFrames bounds the frames of hand-written code between the socket and
// a statement: a reader follows a request from the connection that read it
// to the SQL it sends through at most this many functions of ours.
const maxFrames = 8

// socket is the frame that serves an HTTP connection: the outermost of a
// request's goroutine.
const socket = "net/http.(*conn).serve"

// repository is the repository's directory as the compiler named it (or
// its module's name, under -trimpath).
var repository = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}()

// belowUs are the wrappers of the driver every round trip passes, and the
// test server: code of ours, but no step of a request's own.
var belowUs = []string{"internal/dbhook/", "internal/tracing/", "internal/apitest/"}

var generatedHeader = regexp.MustCompile(`(?m)^// Code generated .* DO NOT EDIT\.$`)

// generated remembers which files of the repository say they are generated.
var generatedFiles sync.Map

// handWritten reports whether a frame's file is hand-written code of the
// repository on a request's way: not the code ent and gqlgen generate (whose
// files say "Code generated … DO NOT EDIT."), not the driver wrappers, not
// a test.
func handWritten(file string) bool {
	path, ok := strings.CutPrefix(file, repository+"/")
	if !ok || strings.HasSuffix(path, "_test.go") || slices.ContainsFunc(belowUs, func(dir string) bool { return strings.HasPrefix(path, dir) }) {
		return false
	}
	g, ok := generatedFiles.Load(path)
	if !ok {
		head, err := os.ReadFile(filepath.Join("..", path)) // the test runs in graph/
		g = err == nil && generatedHeader.Match(head[:min(len(head), 1024)])
		generatedFiles.Store(path, g)
	}
	return !g.(bool)
}

// roundTrip is one exchange with PostgreSQL a request made, and the frames
// of ours it was sent through, the socket's side first.
type roundTrip struct {
	statements []string
	frames     []string
}

// hopTrace records the round trips of the request being traced.
type hopTrace struct {
	mu         sync.Mutex
	operation  string // the request being traced; "" while none is
	roundTrips map[string][]roundTrip
	// elsewhere are a request's round trips sent from a goroutine the
	// request's own started: their frames do not reach the socket.
	elsewhere []string
}

// sending is a statement on its way out of our code, keyed in its
// context: the round trip pgx then makes is noted with its frames.
type sending struct {
	operation string
	frames    []string
	reached   bool // the frames reach the socket
}

type sendingKey struct{}

// tracedServer is a server that, while trace.trace names an operation,
// records the frames of each round trip a request makes: taken where the
// statement leaves our code (ent's driver, a write's batch), kept once pgx
// has sent it (ent's transaction on a write's connection sends nothing).
func tracedServer(t *testing.T) (*apitest.Server, *hopTrace) {
	trace := &hopTrace{roundTrips: map[string][]roundTrip{}}
	s := apitest.New(t, func(c *app.Config) {
		counted, heard := c.RoundTripHook, c.RoundTrips
		c.RoundTripHook = dbhook.Chain(func(ctx context.Context, _ dbhook.Kind, _ string, run func(context.Context) error) error {
			trace.mu.Lock()
			operation := trace.operation
			trace.mu.Unlock()
			if _, request := access.FromContext(ctx); operation == "" || !request {
				return run(ctx) // no request's: the hub, the key cache
			}
			return run(context.WithValue(ctx, sendingKey{}, leaving(operation)))
		}, counted)
		c.RoundTrips = func(ctx context.Context, rt dbhook.RoundTrip) {
			if s, ok := ctx.Value(sendingKey{}).(*sending); ok {
				trace.mu.Lock()
				if s.reached {
					trace.roundTrips[s.operation] = append(trace.roundTrips[s.operation], roundTrip{statements: rt.Statements, frames: s.frames})
				} else {
					trace.elsewhere = append(trace.elsewhere, s.operation+": "+strings.Join(s.frames, " → "))
				}
				trace.mu.Unlock()
			}
			heard(ctx, rt)
		}
	})
	return s, trace
}

// leaving is the statement its caller's caller sends, with the frames of
// ours between it and the socket.
func leaving(operation string) *sending {
	s := &sending{operation: operation}
	pcs := make([]uintptr, 256)
	stack := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	for f, more := stack.Next(); more && !s.reached; f, more = stack.Next() {
		s.reached = f.Function == socket
		if handWritten(f.File) {
			s.frames = append(s.frames, f.Function)
		}
	}
	slices.Reverse(s.frames)
	return s
}

// trace records the round trips of do's requests as operation's.
func (h *hopTrace) trace(operation string, do func()) {
	h.mu.Lock()
	h.operation = operation
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.operation = ""
		h.mu.Unlock()
	}()
	do()
}

// check holds each round trip of operation to maxFrames, and returns them.
func (h *hopTrace) check(t *testing.T, operation string) []roundTrip {
	t.Helper()
	require.Empty(t, h.elsewhere, "round trips sent off the request's goroutine, whose frames this test cannot follow to the socket")
	trips := h.roundTrips[operation]
	require.NotEmpty(t, trips, "%s made no round trip", operation)
	for _, rt := range trips {
		assert.LessOrEqual(t, len(rt.frames), maxFrames, "%s sends %s through %s", operation, rt.statements, strings.Join(rt.frames, " → "))
	}
	return trips
}

// TestRequestsReachTheirSQLInAFewFrames follows recordRead (with a step,
// so that its items join the step's result), a THINK build, recordExchange
// and the nested session page from the socket to every round trip they
// make, through the real server over HTTP, and holds each to maxFrames.
// With -update it writes the table of what it found into
// docs/architecture.md; without, it fails when the table there differs, so
// that the document names the functions a request passes today.
func TestRequestsReachTheirSQLInAFewFrames(t *testing.T) {
	s, trace := tracedServer(t)
	a := kitchenSession(t, s)
	talk := newAgent(t, s, "hops-exchange")
	s.MustDo(t, sessionGraphPage, nil, nil) // the page's plans, cached
	operations := []struct{ name, what string }{
		{"recordRead", "`recordRead` with a step"},
		{"THINK", "a THINK build (`session(id) { context(node: THINK) }`)"},
		{"recordExchange", "`recordExchange`"},
		{"SessionGraphPage", "the nested session page (`sessions(first: 20) { … turns(first: 10) … refs(first: 20) … }`)"},
	}
	trace.trace("recordRead", func() {
		a.do(`mutation($id: ID!, $r: [Map!]!) { recordRead(input: {sessionID: $id, table: "recipes", records: $r, step: 1}) { records } }`,
			map[string]any{"r": []map[string]any{{"id": newUUID(), "name": "Dal Tadka"}}})
	})
	trace.trace("THINK", func() {
		require.NotEmpty(t, a.context("THINK", nil).Text) // the read above changed the session: a fresh build
	})
	trace.trace("recordExchange", func() {
		talk.do(recordExchange, map[string]any{"u": "what can I cook with leeks?", "a": "Leek and potato soup."})
	})
	trace.trace("SessionGraphPage", func() { s.MustDo(t, sessionGraphPage, nil, nil) })

	trips := map[string][]roundTrip{}
	var door []string // the frames every round trip passes first
	for i, op := range operations {
		trips[op.name] = trace.check(t, op.name)
		for j, rt := range trips[op.name] {
			if i == 0 && j == 0 {
				door = rt.frames
			}
			for k := range door {
				if k == len(rt.frames) || rt.frames[k] != door[k] {
					door = door[:k]
					break
				}
			}
		}
	}
	var table strings.Builder
	fmt.Fprintf(&table, "\nFrom the socket, every request below passes through %s (%d frames); a row names the frames after those.\n",
		names(door), len(door))
	for _, op := range operations {
		deepest := 0
		for _, rt := range trips[op.name] {
			deepest = max(deepest, len(rt.frames))
		}
		t.Logf("%s: %d frames of ours from the socket, at most", op.name, deepest)
		fmt.Fprintf(&table, "\n**%s**: at most %d frames from the socket\n\n| round trip | after the door's frames | frames |\n| --- | --- | ---: |\n", op.what, deepest)
		for _, rt := range trips[op.name] {
			fmt.Fprintf(&table, "| %s | %s | %d |\n", summarize(rt.statements), names(rt.frames[len(door):]), len(rt.frames))
		}
	}
	const doc, begin, end = "../docs/architecture.md", "<!-- hops: begin (graph/hops_test.go -update) -->\n", "<!-- hops: end -->\n"
	text, err := os.ReadFile(doc)
	require.NoError(t, err)
	before, rest, ok := strings.Cut(string(text), begin)
	require.True(t, ok, "docs/architecture.md has no %q", begin)
	current, after, ok := strings.Cut(rest, end)
	require.True(t, ok, "docs/architecture.md has no %q", end)
	if *update {
		require.NoError(t, os.WriteFile(doc, []byte(before+begin+table.String()+"\n"+end+after), 0o644))
		return
	}
	assert.Equal(t, table.String()+"\n", current,
		"docs/architecture.md's hop tables differ from what the server does: run go test ./graph -run TestRequestsReachTheirSQLInAFewFrames -update")
}

var closure = regexp.MustCompile(`(\.func\d+)(\.\d+)*$`)

// names lists frames by their short names: the package, the receiver's
// type and the function (engine.Writes.RecordRead); a closure by the
// function it is in (a closure of a function inlined into another is
// named after both, the one it is in last).
func names(frames []string) string {
	out := make([]string, len(frames))
	for i, f := range frames {
		pkg, name, _ := strings.Cut(f[strings.LastIndex(f, "/")+1:], ".")
		inner := closure.MatchString(name)
		if inner {
			parts := strings.Split(closure.ReplaceAllString(name, ""), ".")
			name = parts[len(parts)-1]
			if len(parts) > 1 && strings.HasPrefix(parts[len(parts)-2], "(") {
				name = parts[len(parts)-2] + "." + name
			}
		}
		out[i] = "`" + pkg + "." + strings.NewReplacer("(*", "", ")", "").Replace(name) + "`"
		if inner {
			out[i] += " (its closure)"
		}
	}
	return strings.Join(out, " → ")
}

var tableNamed = regexp.MustCompile(`(?i)\b(?:from|into|update|join)\s+"?([a-z_]+)"?`)

// summarize names a round trip's statements by their verb and the tables
// they name: BEGIN; SELECT sessions; SELECT refs.
func summarize(statements []string) string {
	parts := make([]string, len(statements))
	for i, st := range statements {
		verb, _, _ := strings.Cut(strings.TrimSpace(st), " ")
		verb = strings.ToUpper(verb)
		var tables []string
		for _, m := range tableNamed.FindAllStringSubmatch(st, -1) {
			if !slices.Contains(tables, m[1]) && !slices.Contains([]string{"unnest", "lateral", "select", "set"}, strings.ToLower(m[1])) {
				tables = append(tables, m[1])
			}
		}
		parts[i] = strings.TrimSpace(verb + " " + strings.Join(tables, ", "))
		if strings.Contains(st, "FOR UPDATE") {
			parts[i] += " FOR UPDATE"
		}
	}
	return strings.Join(parts, "; ")
}
