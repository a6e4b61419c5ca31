package graph_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// pageOfTurns is a 50-turn session page as the dashboard's trace reads it:
// each turn's model-call totals, and with receipts, each build's calls.
const (
	pageOfTurns = `query($id: ID!) { session(id: $id) { turns(first: 50, orderBy: [{field: NUMBER}]) { edges { node { number
  modelCallTotals { calls failedCalls inputTokens outputTokens latencyMs cost } } } } } }`
	pageOfTurnsBare = `query($id: ID!) { session(id: $id) { turns(first: 50, orderBy: [{field: NUMBER}]) { edges { node { number } } } } }`
	pageOfReceipts  = `query($id: ID!) { session(id: $id) { turns(first: 50, orderBy: [{field: NUMBER}]) { edges { node { number
  modelCallTotals { calls latencyMs cost } receipts { node modelCalls { model latencyMs } } } } } } }`
)

type pageOut struct {
	Session struct {
		Turns struct {
			Edges []struct {
				Node struct {
					Number          int       `json:"number"`
					ModelCallTotals totalsOut `json:"modelCallTotals"`
					Receipts        []struct {
						Node       string `json:"node"`
						ModelCalls []struct {
							Model     string `json:"model"`
							LatencyMs int    `json:"latencyMs"`
						} `json:"modelCalls"`
					} `json:"receipts"`
				} `json:"node"`
			} `json:"edges"`
		} `json:"turns"`
	} `json:"session"`
}

// A page of 50 turns reads their model-call totals in one statement, not
// one per turn, and their receipts and the receipts' calls in one more
// each; every turn still gets its own totals and calls.
func TestAPageOfTurnsReadsTheirModelCallsInOneStatementEach(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "fifty-turns")
	for n := 1; n <= 50; n++ {
		a.turn("turn")
		think := a.recordContext("THINK")
		// Turn n's one call took n ms and cost n cents; every tenth failed.
		c := map[string]any{"receiptID": think.Receipt.ID, "sessionID": a.id, "latencyMs": n, "cost": float64(n) / 100}
		if n%10 == 0 {
			c["error"] = "timeout"
		}
		recordCall(t, s, call(c))
	}
	s.MustDo(t, `{ viewer { role } }`, nil, nil) // the key's first request looks it up
	count := func(query string) (int64, pageOut) {
		before := s.Statements()
		var out pageOut
		s.MustDo(t, query, map[string]any{"id": a.id}, &out)
		return s.Statements() - before, out
	}

	bare, _ := count(pageOfTurnsBare)
	totals, page := count(pageOfTurns)
	assert.Equal(t, bare+1, totals, "the 50 turns' totals are one statement")
	require.Len(t, page.Session.Turns.Edges, 50)
	for i, e := range page.Session.Turns.Edges {
		n := i + 1
		want := totalsOut{Calls: 1, InputTokens: 1200, OutputTokens: 300, LatencyMs: n, Cost: float64(n) / 100}
		if n%10 == 0 {
			want.FailedCalls = 1
		}
		assert.Equal(t, n, e.Node.Number)
		assert.Equal(t, want, e.Node.ModelCallTotals, "turn %d", n)
	}

	withReceipts, page := count(pageOfReceipts)
	assert.Equal(t, bare+3, withReceipts, "totals, receipts and their calls are a statement each")
	require.Len(t, page.Session.Turns.Edges, 50)
	for i, e := range page.Session.Turns.Edges {
		require.Len(t, e.Node.Receipts, 1, "turn %d", i+1)
		assert.Equal(t, "THINK", e.Node.Receipts[0].Node)
		require.Len(t, e.Node.Receipts[0].ModelCalls, 1, "turn %d", i+1)
		assert.Equal(t, i+1, e.Node.Receipts[0].ModelCalls[0].LatencyMs, "turn %d's receipt lists its own call", i+1)
	}
	t.Logf("statements: the bare page %d, with totals %d, with receipts and calls %d", bare, totals, withReceipts)
}

// A page of 20 sessions (a user's page) reads their model-call totals in
// one statement, each session its own.
func TestAPageOfSessionsReadsTheirModelCallTotalsInOneStatement(t *testing.T) {
	s := apitest.New(t)
	for n := 1; n <= 20; n++ {
		a := newAgent(t, s, fmt.Sprintf("session-%02d", n))
		a.turn("turn")
		think := a.recordContext("THINK")
		for range n % 3 { // 0, 1 or 2 calls
			recordCall(t, s, call(map[string]any{"receiptID": think.Receipt.ID, "sessionID": a.id, "latencyMs": n, "cost": float64(n) / 100}))
		}
	}
	s.MustDo(t, `{ viewer { role } }`, nil, nil) // the key's first request looks it up
	count := func(selection string) (int64, []byte) {
		before := s.Statements()
		res := s.Do(t, `{ sessions(first: 20, orderBy: {field: CREATED_AT}) { edges { node { externalKey `+selection+` } } } }`, nil)
		require.Empty(t, res.Errors)
		return s.Statements() - before, res.Data
	}
	bare, _ := count("")
	withTotals, data := count("modelCallTotals { calls latencyMs cost }")
	assert.Equal(t, bare+1, withTotals, "the 20 sessions' totals are one statement")
	var page struct {
		Sessions struct {
			Edges []struct {
				Node struct {
					ExternalKey     string    `json:"externalKey"`
					ModelCallTotals totalsOut `json:"modelCallTotals"`
				} `json:"node"`
			} `json:"edges"`
		} `json:"sessions"`
	}
	require.NoError(t, json.Unmarshal(data, &page))
	require.Len(t, page.Sessions.Edges, 20)
	for i, e := range page.Sessions.Edges {
		n := i + 1
		calls := n % 3
		assert.Equal(t, fmt.Sprintf("session-%02d", n), e.Node.ExternalKey)
		assert.Equal(t, totalsOut{Calls: calls, LatencyMs: calls * n, Cost: float64(calls*n) / 100}, e.Node.ModelCallTotals, "session %d", n)
	}
	t.Logf("statements: the bare page %d, with totals %d", bare, withTotals)
}

// A mutation's root fields run one after another, each answered with what
// the ones before it changed: the turn's totals after the second call
// count both calls, not what the first payload read.
func TestAMutationsRootFieldsEachReadTheirOwnTotals(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "two-calls")
	a.turn("turn")
	think := a.recordContext("THINK")
	in := call(map[string]any{"receiptID": think.Receipt.ID, "sessionID": a.id})
	item := []string{`{"role":"assistant","content":"checking"}`}
	var out struct {
		First struct {
			Turn struct{ ModelCallTotals totalsOut }
		} `json:"first"`
		Second struct {
			Turn struct{ ModelCallTotals totalsOut }
		} `json:"second"`
	}
	s.MustDo(t, `mutation($id: ID!, $call: RecordModelCallInput!, $items: [String!]!) {
  a: recordModelCall(input: $call) { modelCall { model } }
  first: recordItems(input: {sessionID: $id, items: $items}) { turn { modelCallTotals { calls } } }
  b: recordModelCall(input: $call) { modelCall { model } }
  second: recordItems(input: {sessionID: $id, items: $items}) { turn { modelCallTotals { calls } } } }`,
		map[string]any{"id": a.id, "call": in, "items": item}, &out)
	assert.Equal(t, 1, out.First.Turn.ModelCallTotals.Calls)
	assert.Equal(t, 2, out.Second.Turn.ModelCallTotals.Calls)
}
