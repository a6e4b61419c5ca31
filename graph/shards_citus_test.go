//go:build citus

package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/testdb"
)

// On Citus (make test-citus builds this file), each operation of
// docs/scale-out.md's table "One shard or every shard" asks the shards the
// table says: every statement the server sends for an operation that
// concerns one session asks one shard (Citus's Task Count of 1 in each of
// its plans, nothing pulled through the coordinator), and the operations
// the table lists as asking every shard do. The statements are recorded
// as the server sent them and EXPLAINed on the coordinator with their
// arguments.
func TestEachOperationAsksTheShardsTheScaleOutDocSays(t *testing.T) {
	require.True(t, testdb.Citus(), "this file is built for make test-citus only")
	rec := &apitest.Recorder{}
	s := apitest.New(t, apitest.Recording(rec))
	ctx := context.Background()
	var shards int
	require.NoError(t, s.DB.QueryRowContext(ctx,
		`SELECT count(*) FROM pg_dist_shard WHERE logicalrelid = 'sessions'::regclass`).Scan(&shards))
	require.Greater(t, shards, 1)
	client := s.WithKey(s.NewKey(t, "CLIENT", "acme"))
	client.MustDo(t, `{ viewer { role } }`, nil, nil) // the key's first request looks it up

	var opened struct {
		OpenSession struct{ Session struct{ ID string } } `json:"openSession"`
	}
	var receipts [2]string
	records := []map[string]any{{"id": "0190b3a4-0000-7000-8000-000000000001", "name": "Dal"},
		{"id": "0190b3a4-0000-7000-8000-000000000002", "name": "Kheer"}}
	id := func() map[string]any { return map[string]any{"id": opened.OpenSession.Session.ID} }
	type operation struct {
		name   string
		router bool // every statement on one shard; else some statement asks every shard
		fanout int  // when not 0, how many statements may ask every shard
		as     *apitest.Server
		run    func(s *apitest.Server)
	}
	mustDo := func(query string, vars func() map[string]any) func(s *apitest.Server) {
		return func(s *apitest.Server) {
			var v map[string]any
			if vars != nil {
				v = vars()
			}
			s.MustDo(t, query, v, nil)
		}
	}
	recordContext := func(i int) func(s *apitest.Server) {
		return func(s *apitest.Server) {
			var out struct {
				RecordContext struct{ Receipt struct{ ID string } } `json:"recordContext"`
			}
			s.MustDo(t, `mutation($id: ID!) { recordContext(input: {sessionID: $id, node: THINK}) { receipt { id } } }`, id(), &out)
			receipts[i] = out.RecordContext.Receipt.ID
		}
	}
	receiptVars := func(named bool) func() map[string]any {
		return func() map[string]any {
			v := map[string]any{"r": receipts[0], "from": receipts[0], "to": receipts[1]}
			if named {
				v["s"] = opened.OpenSession.Session.ID
			}
			return v
		}
	}
	ops := []operation{
		{name: "openSession, creating (each statement; the transaction spans the key's shard and the session's)", router: true, as: client,
			run: func(s *apitest.Server) {
				s.MustDo(t, `mutation { openSession(input: {tenant: "acme", externalKey: "shards"}) { session { id } } }`, nil, &opened)
			}},
		{name: "openSession, live session", router: true, as: client,
			run: mustDo(`mutation { openSession(input: {tenant: "acme", externalKey: "shards"}) { session { id } } }`, nil)},
		{name: "sessionByKey", router: true, as: client,
			run: mustDo(`{ sessionByKey(tenant: "acme", externalKey: "shards") { id status } }`, nil)},
		{name: "session(id)", router: true, as: client,
			run: mustDo(`query($id: ID!) { session(id: $id) { id status currentTurn } }`, id)},
		{name: "node(id) of a session", router: true, as: client,
			run: mustDo(`query($id: ID!) { node(id: $id) { ... on Session { id status } } }`, id)},
		{name: "beginTurn", router: true, as: client,
			run: mustDo(`mutation($id: ID!) { beginTurn(input: {sessionID: $id, userMessage: "what can I cook?"}) { turn { number } } }`, id)},
		{name: "recordRead with a step, its refs and their artifacts", router: true, as: client,
			run: mustDo(`mutation($id: ID!, $r: [Map!]!) { recordRead(input: {sessionID: $id, table: "recipes", records: $r, step: 1}) {
				records refs { ref label artifact { status } } } }`, func() map[string]any { return map[string]any{"id": opened.OpenSession.Session.ID, "r": records} })},
		{name: "recordGenerated", router: true, as: client,
			run: mustDo(`mutation($id: ID!) { recordGenerated(input: {sessionID: $id, entityType: "recipe", content: {name: "Coconut Rice"}, step: 2}) {
				ref { ref artifact { status content } } } }`, id)},
		{name: "updateSession", router: true, as: client,
			run: mustDo(`mutation($id: ID!) { updateSession(input: {id: $id, historySummary: "cooking"}) { session { id } } }`, id)},
		{name: "a context build", router: true, as: client,
			run: mustDo(`query($id: ID!) { session(id: $id) { context(node: THINK) { text tokenCount } } }`, id)},
		{name: "recordContext", router: true, as: client, run: recordContext(0)},
		{name: "recordContext, again", router: true, as: client, run: recordContext(1)},
		{name: "contextReceipt(id, sessionID)", router: true, as: client,
			run: mustDo(`query($r: ID!, $s: ID!) { contextReceipt(id: $r, sessionID: $s) { id tokenCount } }`, receiptVars(true))},
		{name: "contextReceiptDiff(from, to, sessionID)", router: true, as: client,
			run: mustDo(`query($from: ID!, $to: ID!, $s: ID!) { contextReceiptDiff(from: $from, to: $to, sessionID: $s) { textCompared } }`, receiptVars(true))},
		{name: "a session's refs, turns and artifacts", router: true, as: client,
			run: mustDo(`query($id: ID!) { session(id: $id) {
				turns(first: 10) { edges { node { number status } } }
				refs(first: 20) { edges { node { ref label } } }
				artifacts(first: 10) { edges { node { label status } } } } }`, id)},
		{name: "endTurn", router: true, as: client,
			run: mustDo(`mutation($id: ID!) { endTurn(input: {sessionID: $id, assistantMessage: "Dal or kheer."}) { turn { number } } }`, id)},
		{name: "expireSession(id)", router: true, as: s,
			run: mustDo(`mutation($id: ID!) { expireSession(input: {id: $id}) { session { id } } }`, id)},
		{name: "contextReceipt(id)", router: false, as: client,
			run: mustDo(`query($r: ID!) { contextReceipt(id: $r) { id } }`, receiptVars(false))},
		{name: "contextReceiptDiff(from, to)", router: false, as: client,
			run: mustDo(`query($from: ID!, $to: ID!) { contextReceiptDiff(from: $from, to: $to) { textCompared } }`, receiptVars(false))},
		{name: "node(id) of a receipt: located over every shard once, then read on its session's", fanout: 1, as: client,
			run: mustDo(`query($r: ID!) { node(id: $r) { ... on ContextReceipt { id tokenCount } } }`, receiptVars(false))},
		{name: "the sessions list", router: false, as: client,
			run: mustDo(`{ sessions(first: 20) { edges { node { id } } } }`, nil)},
		{name: "expireSessions(where)", router: false, as: s,
			run: mustDo(`mutation { expireSessions(input: {where: {tenant: "acme"}}) { count } }`, nil)},
	}
	var table []string
	for _, op := range ops {
		stmts := rec.Record(func() { op.run(op.as) })
		require.NotEmpty(t, stmts, "%s sent no statement", op.name)
		widest, explained, fanouts := 0, 0, 0
		for _, st := range stmts {
			if !explainable(st.Query) {
				continue
			}
			explained++
			tasks, pulled := shardsAsked(t, s, st)
			if op.router {
				assert.Equal(t, 1, tasks, "%s: asks %d shards: %s", op.name, tasks, shorten(st.Query))
				assert.False(t, pulled, "%s: pulls rows through the coordinator: %s", op.name, shorten(st.Query))
			}
			widest = max(widest, tasks)
			if tasks == shards {
				fanouts++
			}
		}
		if op.fanout > 0 {
			assert.LessOrEqual(t, fanouts, op.fanout, "%s: %d statements ask every shard", op.name, fanouts)
		}
		if !op.router {
			assert.Equal(t, shards, widest, "%s asks every shard", op.name)
		}
		table = append(table, fmt.Sprintf("%s: %d statements, at most %d of %d shards", op.name, explained, widest, shards))
	}
	t.Log("\n" + strings.Join(table, "\n"))
}

// shardsAsked EXPLAINs a statement on the coordinator with its arguments
// and returns the largest Task Count in its plan (subplans included), and
// whether Citus pulls an INSERT … SELECT's rows through the coordinator.
func shardsAsked(t *testing.T, s *apitest.Server, st apitest.Statement) (tasks int, pulled bool) {
	t.Helper()
	var raw []byte
	require.NoError(t, s.DB.QueryRowContext(context.Background(), "EXPLAIN (FORMAT JSON) "+st.Query, st.Args...).Scan(&raw),
		"EXPLAIN %s", st.Query)
	var plan any
	require.NoError(t, json.Unmarshal(raw, &plan))
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				switch k {
				case "Task Count":
					if n, ok := x.(float64); ok {
						tasks = max(tasks, int(n))
					}
				case "INSERT/SELECT method":
					pulled = pulled || x != "router"
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(plan)
	return tasks, pulled
}
