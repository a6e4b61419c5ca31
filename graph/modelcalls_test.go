package graph_test

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

const recordModelCall = `mutation($in: RecordModelCallInput!) { recordModelCall(input: $in) { modelCall {
  id sessionID receiptID turn node model inputTokens outputTokens latencyMs cost finishReason error } } }`

type modelCallOut struct {
	ID           string  `json:"id"`
	SessionID    string  `json:"sessionID"`
	ReceiptID    string  `json:"receiptID"`
	Turn         int     `json:"turn"`
	Node         string  `json:"node"`
	Model        string  `json:"model"`
	InputTokens  int     `json:"inputTokens"`
	OutputTokens int     `json:"outputTokens"`
	LatencyMs    int     `json:"latencyMs"`
	Cost         float64 `json:"cost"`
	FinishReason *string `json:"finishReason"`
	Error        *string `json:"error"`
}

type totalsOut struct {
	Calls        int     `json:"calls"`
	FailedCalls  int     `json:"failedCalls"`
	InputTokens  int     `json:"inputTokens"`
	OutputTokens int     `json:"outputTokens"`
	LatencyMs    int     `json:"latencyMs"`
	Cost         float64 `json:"cost"`
}

// call is a model call's report, to change per case.
func call(fields map[string]any) map[string]any {
	in := map[string]any{"model": "gpt-4o", "inputTokens": 1200, "outputTokens": 300, "latencyMs": 800, "cost": 0.0061, "finishReason": "stop"}
	for k, v := range fields {
		in[k] = v
	}
	return in
}

func recordCall(t *testing.T, s *apitest.Server, in map[string]any) modelCallOut {
	t.Helper()
	return decode[struct {
		RecordModelCall struct {
			ModelCall modelCallOut `json:"modelCall"`
		} `json:"recordModelCall"`
	}](t, mustData(t, s, recordModelCall, map[string]any{"in": in})).RecordModelCall.ModelCall
}

const callsAndTotals = `query($id: ID!) { session(id: $id) {
  modelCallTotals { calls failedCalls inputTokens outputTokens latencyMs cost }
  turns(first: 10, orderBy: [{field: NUMBER}]) { edges { node { number modelCallTotals { calls failedCalls inputTokens outputTokens latencyMs cost }
    receipts { id node modelCalls { id model inputTokens outputTokens latencyMs cost finishReason error } } } } }
  events(first: 100, where: {kind: "model.call_recorded"}) { edges { node { payload } } } } }`

type callsAndTotalsOut struct {
	Session struct {
		ModelCallTotals totalsOut `json:"modelCallTotals"`
		Turns           struct {
			Edges []struct {
				Node struct {
					Number          int       `json:"number"`
					ModelCallTotals totalsOut `json:"modelCallTotals"`
					Receipts        []struct {
						ID         string         `json:"id"`
						Node       string         `json:"node"`
						ModelCalls []modelCallOut `json:"modelCalls"`
					} `json:"receipts"`
				} `json:"node"`
			} `json:"edges"`
		} `json:"turns"`
		Events struct {
			Edges []struct {
				Node struct {
					Payload map[string]any `json:"payload"`
				} `json:"node"`
			} `json:"edges"`
		} `json:"events"`
	} `json:"session"`
}

func callsOf(t *testing.T, s *apitest.Server, session string) callsAndTotalsOut {
	t.Helper()
	return decode[callsAndTotalsOut](t, mustData(t, s, callsAndTotals, map[string]any{"id": session}))
}

// A runtime reports the call each recorded build fed, by the receipt or by
// the session and node (the node's newest build in the turn); the receipt
// lists its calls, node(id) finds one, and each report is a write of the
// session with its event.
func TestAModelCallIsKeptWithTheBuildItFed(t *testing.T) {
	s := apitest.New(t)
	a, first, second := receiptSession(t, s)

	byReceipt := recordCall(t, s, call(map[string]any{"receiptID": first.Receipt.ID, "sessionID": a.id}))
	assert.Equal(t, modelCallOut{ID: byReceipt.ID, SessionID: a.id, ReceiptID: first.Receipt.ID, Turn: 1, Node: "THINK",
		Model: "gpt-4o", InputTokens: 1200, OutputTokens: 300, LatencyMs: 800, Cost: 0.0061, FinishReason: new("stop")}, byReceipt)

	failed := recordCall(t, s, map[string]any{"sessionID": a.id, "node": "THINK", "model": "claude-sonnet-4", "inputTokens": 900,
		"outputTokens": 0, "latencyMs": 30000, "cost": 0, "error": "429 Too Many Requests: rate limit reached"})
	assert.Equal(t, second.Receipt.ID, failed.ReceiptID, "the node's newest receipt of the current turn")
	assert.Equal(t, 2, failed.Turn)
	assert.Nil(t, failed.FinishReason)
	assert.Equal(t, new("429 Too Many Requests: rate limit reached"), failed.Error)

	got := callsOf(t, s, a.id)
	turns := got.Session.Turns.Edges
	require.Len(t, turns, 2)
	require.Len(t, turns[0].Node.Receipts, 1)
	assert.Equal(t, []modelCallOut{{ID: byReceipt.ID, Model: "gpt-4o", InputTokens: 1200, OutputTokens: 300, LatencyMs: 800, Cost: 0.0061,
		FinishReason: new("stop")}}, turns[0].Node.Receipts[0].ModelCalls)
	require.Len(t, turns[1].Node.Receipts, 1)
	require.Len(t, turns[1].Node.Receipts[0].ModelCalls, 1)
	assert.Equal(t, failed.ID, turns[1].Node.Receipts[0].ModelCalls[0].ID)

	var payloads []map[string]any
	for _, e := range got.Session.Events.Edges {
		payloads = append(payloads, e.Node.Payload)
	}
	assert.Equal(t, []map[string]any{
		{"receipt": first.Receipt.ID, "turn": 1.0, "model": "gpt-4o", "latencyMs": 800.0, "cost": 0.0061, "failed": false},
		{"receipt": second.Receipt.ID, "turn": 2.0, "model": "claude-sonnet-4", "latencyMs": 30000.0, "cost": 0.0, "failed": true},
	}, payloads)

	var node struct {
		Node modelCallOut `json:"node"`
	}
	s.MustDo(t, `query($id: ID!) { node(id: $id) { ... on ModelCall { id receiptID model } } }`, map[string]any{"id": failed.ID}, &node)
	assert.Equal(t, modelCallOut{ID: failed.ID, ReceiptID: second.Receipt.ID, Model: "claude-sonnet-4"}, node.Node)
}

// A turn's totals sum the calls its builds fed, the session's every call;
// costs add up exactly (0.1 + 0.2 is 0.3, which float addition misses).
func TestModelCallTotalsSumTurnsAndSessions(t *testing.T) {
	s := apitest.New(t)
	a, first, second := receiptSession(t, s)
	act := a.recordContext("ACT")
	recordCall(t, s, call(map[string]any{"receiptID": first.Receipt.ID, "inputTokens": 1000, "outputTokens": 100, "latencyMs": 700, "cost": 0.1}))
	recordCall(t, s, call(map[string]any{"receiptID": first.Receipt.ID, "inputTokens": 1000, "outputTokens": 0, "latencyMs": 5000, "cost": 0,
		"error": "timeout"}))
	recordCall(t, s, call(map[string]any{"receiptID": second.Receipt.ID, "inputTokens": 2000, "outputTokens": 250, "latencyMs": 900, "cost": 0.2}))
	recordCall(t, s, call(map[string]any{"receiptID": act.Receipt.ID, "inputTokens": 3000, "outputTokens": 400, "latencyMs": 1100, "cost": 0.0000000001}))

	got := callsOf(t, s, a.id).Session
	assert.Equal(t, totalsOut{Calls: 4, FailedCalls: 1, InputTokens: 7000, OutputTokens: 750, LatencyMs: 7700, Cost: 0.3000000001}, got.ModelCallTotals)
	require.Len(t, got.Turns.Edges, 2)
	assert.Equal(t, totalsOut{Calls: 2, FailedCalls: 1, InputTokens: 2000, OutputTokens: 100, LatencyMs: 5700, Cost: 0.1}, got.Turns.Edges[0].Node.ModelCallTotals)
	assert.Equal(t, totalsOut{Calls: 2, InputTokens: 5000, OutputTokens: 650, LatencyMs: 2000, Cost: 0.2000000001}, got.Turns.Edges[1].Node.ModelCallTotals)

	// A session without calls has zero totals.
	b := newAgent(t, s, "no-calls")
	assert.Equal(t, totalsOut{}, callsOf(t, s, b.id).Session.ModelCallTotals)
}

// A report no model call makes is refused with its code and field, and
// changes nothing: no call, no event.
func TestRecordModelCallRefusesBadInput(t *testing.T) {
	s := apitest.New(t)
	a, first, _ := receiptSession(t, s)
	r := first.Receipt.ID
	cases := map[string]struct {
		in    map[string]any
		code  string
		field string
	}{
		"no build named":          {call(nil), "BAD_USER_INPUT", "receiptID"},
		"a session without node":  {call(map[string]any{"sessionID": a.id}), "BAD_USER_INPUT", "receiptID"},
		"empty model":             {call(map[string]any{"receiptID": r, "model": ""}), "BAD_USER_INPUT", "model"},
		"model too long":          {call(map[string]any{"receiptID": r, "model": strings.Repeat("m", 201)}), "INPUT_TOO_LARGE", "model"},
		"finish reason too long":  {call(map[string]any{"receiptID": r, "finishReason": strings.Repeat("f", 101)}), "INPUT_TOO_LARGE", "finishReason"},
		"error too long":          {call(map[string]any{"receiptID": r, "error": strings.Repeat("e", 10_001)}), "INPUT_TOO_LARGE", "error"},
		"empty error":             {call(map[string]any{"receiptID": r, "error": ""}), "BAD_USER_INPUT", "error"},
		"negative input tokens":   {call(map[string]any{"receiptID": r, "inputTokens": -1}), "BAD_USER_INPUT", "inputTokens"},
		"negative output tokens":  {call(map[string]any{"receiptID": r, "outputTokens": -5}), "BAD_USER_INPUT", "outputTokens"},
		"too many tokens":         {call(map[string]any{"receiptID": r, "inputTokens": 100_000_001}), "BAD_USER_INPUT", "inputTokens"},
		"negative latency":        {call(map[string]any{"receiptID": r, "latencyMs": -1}), "BAD_USER_INPUT", "latencyMs"},
		"latency past a day":      {call(map[string]any{"receiptID": r, "latencyMs": 86_400_001}), "BAD_USER_INPUT", "latencyMs"},
		"negative cost":           {call(map[string]any{"receiptID": r, "cost": -0.01}), "BAD_USER_INPUT", "cost"},
		"cost past a million":     {call(map[string]any{"receiptID": r, "cost": 1_000_000.5}), "BAD_USER_INPUT", "cost"},
		"unknown receipt":         {call(map[string]any{"receiptID": newUUID()}), "NOT_FOUND", ""},
		"receipt of another run":  {call(map[string]any{"receiptID": r, "sessionID": newAgent(t, s, "other-run").id}), "NOT_FOUND", ""},
		"no build of the node":    {call(map[string]any{"sessionID": a.id, "node": "REPLY"}), "NOT_FOUND", ""},
		"a receipt id not a UUID": {call(map[string]any{"receiptID": "r1"}), "INVALID_ID", ""},
	}
	for name, c := range cases {
		res := s.Do(t, recordModelCall, map[string]any{"in": c.in})
		require.Len(t, res.Errors, 1, name)
		assert.Equal(t, c.code, res.Errors[0].Code(), name)
		if c.field != "" {
			assert.Equal(t, c.field, res.Errors[0].Extensions["field"], name)
		}
	}
	// Text that is not UTF-8 is the door's to refuse.
	query, err := json.Marshal(recordModelCall)
	require.NoError(t, err)
	status, res := sendRaw(t, s, http.MethodPost, "/graphql", []byte(`{"query":`+string(query)+
		`,"variables":{"in":{"receiptID":"`+r+`","model":"gpt`+"\xff"+`","inputTokens":1,"outputTokens":1,"latencyMs":1,"cost":0}}}`))
	assert.Equal(t, http.StatusBadRequest, status)
	require.Len(t, res.Errors, 1)
	assert.Equal(t, "BAD_USER_INPUT", res.Errors[0].Code())
	assert.Equal(t, "variables.in.model", res.Errors[0].Extensions["field"])

	got := callsOf(t, s, a.id).Session
	assert.Equal(t, totalsOut{}, got.ModelCallTotals)
	assert.Empty(t, got.Events.Edges)

	// A build feeds at most 20 calls (a call and its retries).
	for range 20 {
		recordCall(t, s, call(map[string]any{"receiptID": r}))
	}
	assert.Equal(t, "INPUT_TOO_LARGE", s.ErrorCode(t, recordModelCall, map[string]any{"in": call(map[string]any{"receiptID": r})}))
	assert.Equal(t, 20, callsOf(t, s, a.id).Session.ModelCallTotals.Calls)

	// An expired session takes no report.
	b := newAgent(t, s, "expiring")
	b.turn("hello")
	last := b.recordContext("THINK")
	b.do(`mutation($id: ID!) { expireSession(input: {id: $id}) { session { id } } }`, nil)
	assert.Equal(t, "SESSION_EXPIRED", s.ErrorCode(t, recordModelCall, map[string]any{"in": call(map[string]any{"receiptID": last.Receipt.ID})}))
}

// Another tenant's receipt is not found, for a report and for a read; a
// READER key may read calls and totals but not report one.
func TestModelCallsKeepToTheirTenant(t *testing.T) {
	s := apitest.New(t)
	a, first, _ := receiptSession(t, s)
	recordCall(t, s, call(map[string]any{"receiptID": first.Receipt.ID}))

	globex := s.WithKey(s.NewKey(t, "CLIENT", "globex"))
	assert.Equal(t, "NOT_FOUND", globex.ErrorCode(t, recordModelCall, map[string]any{"in": call(map[string]any{"receiptID": first.Receipt.ID})}))
	assert.Equal(t, "NOT_FOUND", globex.ErrorCode(t, recordModelCall, map[string]any{"in": call(map[string]any{"sessionID": a.id, "node": "THINK"})}))
	assert.Equal(t, "NOT_FOUND", globex.ErrorCode(t, callsAndTotals, map[string]any{"id": a.id}))
	var sessions struct {
		Sessions struct {
			TotalCount int `json:"totalCount"`
		} `json:"sessions"`
	}
	globex.MustDo(t, `{ sessions(where: {hasFailedTurn: false}) { totalCount } }`, nil, &sessions)
	assert.Equal(t, 0, sessions.Sessions.TotalCount)

	reader := s.WithKey(s.NewKey(t, "READER", "acme"))
	assert.Equal(t, "FORBIDDEN", reader.ErrorCode(t, recordModelCall, map[string]any{"in": call(map[string]any{"receiptID": first.Receipt.ID})}))
	assert.Equal(t, 1, callsOf(t, reader, a.id).Session.ModelCallTotals.Calls)
	assert.Equal(t, 1, callsOf(t, s.WithKey(s.NewKey(t, "CLIENT", "acme")), a.id).Session.ModelCallTotals.Calls)
}

// The session list finds the sessions with a failed turn (failTurn, or a
// call that returned an error), with a turn slower than N ms in all, and
// costing more than X dollars, alone or together; compiled pages (plain
// fields) and gqlgen's (a field with a resolver) answer the same.
func TestTheSessionListFindsFailedSlowAndExpensiveSessions(t *testing.T) {
	s := apitest.New(t)
	session := func(key string, calls ...map[string]any) {
		a := newAgent(t, s, key)
		a.turn("plan dinner")
		r := a.recordContext("THINK")
		for _, c := range calls {
			c["receiptID"] = r.Receipt.ID
			recordCall(t, s, call(c))
		}
	}
	session("calm", map[string]any{"latencyMs": 900, "cost": 0.01})
	session("errored", map[string]any{"latencyMs": 300, "cost": 0.01, "error": "500 from the provider"})
	// Two calls of one turn: 700 + 600 ms, over a second in all.
	session("slow", map[string]any{"latencyMs": 700, "cost": 0.02}, map[string]any{"latencyMs": 600, "cost": 0.03})
	session("costly", map[string]any{"latencyMs": 400, "cost": 1.5})
	session("slow-and-costly", map[string]any{"latencyMs": 2500, "cost": 0.75}, map[string]any{"latencyMs": 10, "cost": 0.25})
	session("quiet")
	failed := newAgent(t, s, "failed-turn")
	failed.turn("hello")
	failed.do(`mutation($id: ID!) { failTurn(input: {sessionID: $id, reason: "the tool crashed"}) { turn { number } } }`, nil)

	for filter, want := range map[string][]string{
		`{hasFailedTurn: true}`:                         {"errored", "failed-turn"},
		`{hasFailedTurn: false}`:                        {"calm", "costly", "quiet", "slow", "slow-and-costly"},
		`{turnSlowerThanMs: 1000}`:                      {"slow", "slow-and-costly"},
		`{turnSlowerThanMs: 1300}`:                      {"slow-and-costly"},
		`{costAbove: 0.5}`:                              {"costly", "slow-and-costly"},
		`{costAbove: 0.99}`:                             {"costly", "slow-and-costly"},
		`{costAbove: 1.0}`:                              {"costly"},
		`{turnSlowerThanMs: 1000, costAbove: 0.5}`:      {"slow-and-costly"},
		`{or: [{hasFailedTurn: true}, {costAbove: 1}]}`: {"costly", "errored", "failed-turn"},
		`{not: {turnSlowerThanMs: 0}}`:                  {"failed-turn", "quiet"},
	} {
		for _, selection := range []string{"externalKey", "externalKey modelCallTotals { calls }"} {
			var out struct {
				Sessions struct {
					Edges []struct {
						Node struct {
							ExternalKey string `json:"externalKey"`
						} `json:"node"`
					} `json:"edges"`
				} `json:"sessions"`
			}
			s.MustDo(t, `{ sessions(first: 50, where: `+filter+`) { edges { node { `+selection+` } } } }`, nil, &out)
			var keys []string
			for _, e := range out.Sessions.Edges {
				keys = append(keys, e.Node.ExternalKey)
			}
			sort.Strings(keys)
			assert.Equal(t, want, keys, "%s, selecting %s", filter, selection)
		}
	}
	assert.Equal(t, "BAD_USER_INPUT", s.ErrorCode(t, `{ sessions(where: {turnSlowerThanMs: -1}) { totalCount } }`, nil))
	assert.Equal(t, "BAD_USER_INPUT", s.ErrorCode(t, `{ sessions(where: {costAbove: -0.5}) { totalCount } }`, nil))
}
