package graph_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// eventTurns is each event of the session, in order, as "kind turn" (turn
// "-" when it has none), read with where, which may be nil.
func eventTurns(t *testing.T, s *apitest.Server, id string, where map[string]any) []string {
	t.Helper()
	var out struct {
		Session struct {
			Events struct {
				Edges []struct {
					Node struct {
						Kind string
						Turn *int
					}
				}
			}
		}
	}
	s.MustDo(t, `query($id: ID!, $where: EventWhereInput) { session(id: $id) {
		events(first: 100, where: $where, orderBy: [{field: SEQUENCE}]) { edges { node { kind turn } } } } }`,
		map[string]any{"id": id, "where": where}, &out)
	var got []string
	for _, e := range out.Session.Events.Edges {
		turn := "-"
		if e.Node.Turn != nil {
			turn = fmt.Sprint(*e.Node.Turn)
		}
		got = append(got, e.Node.Kind+" "+turn)
	}
	return got
}

// Every event knows the turn it belongs to: the turn its payload names
// (a model call of turn 1's build recorded in turn 2 is turn 1's), else the
// session's current turn when written; none before the first turn. A
// turn's events read by Session.events(where: {turn: n}).
func TestEachEventKnowsItsTurn(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "event-turns")
	a.do(`mutation($id: ID!) { updateSession(input: {id: $id, historySummary: "before any turn"}) { session { id } } }`, nil)

	a.turn("what recipes do i have?")
	a.readStep("recipes", 1, map[string]any{"id": newUUID(), "name": "Dal"})
	a.describe(1, "READ", "found the recipes")
	a.do(recordItems, map[string]any{"items": agentsSDKItems[:2]})
	first := a.recordContext("ACT")
	a.do(`mutation($id: ID!) { recordModelCall(input: {sessionID: $id, node: ACT, model: "gpt-4o", inputTokens: 9,
		outputTokens: 8, latencyMs: 7, cost: 0.001}) { modelCall { id } } }`, nil)
	a.do(`mutation($id: ID!) { retainRef(input: {sessionID: $id, ref: "recipe_1", reason: "the user likes it"}) { ref { ref } } }`, nil)
	a.do(`mutation($id: ID!, $s: ExecutionSummaryInput!) { updateTurn(input: {sessionID: $id, summary: $s}) { turn { number } } }`,
		map[string]any{"s": map[string]any{"goal": "list recipes"}})

	a.turn("and now?") // ends turn 1, begins turn 2
	a.s.MustDo(t, `mutation($r: ID!) { recordModelCall(input: {receiptID: $r, model: "gpt-4o", inputTokens: 1,
		outputTokens: 1, latencyMs: 1, cost: 0}) { modelCall { id } } }`, map[string]any{"r": first.Receipt.ID}, nil)
	a.do(`mutation($id: ID!) { failTurn(input: {sessionID: $id, reason: "tool crashed"}) { turn { number } } }`, nil)
	a.do(`mutation($id: ID!) { resetConversation(input: {sessionID: $id}) { session { id } } }`, nil)
	a.do(`mutation($id: ID!) { expireSession(input: {id: $id}) { session { id } } }`, nil)

	assert.Equal(t, []string{
		"session.opened -", "session.updated -",
		"turn.began 1", "refs.read 1", "step.recorded 1", "turn.items_recorded 1", "context.recorded 1",
		"model.call_recorded 1", "ref.retained 1", "turn.updated 1", "turn.ended 1",
		"turn.began 2", "model.call_recorded 1", "turn.failed 2",
		// A reset keeps the turn numbers going: it is written in turn 2,
		// as is whatever comes after it until the next turn begins.
		"conversation.reset 2", "session.expired 2",
	}, eventTurns(t, s, a.id, nil))

	assert.Equal(t, []string{
		"turn.began 1", "refs.read 1", "step.recorded 1", "turn.items_recorded 1", "context.recorded 1",
		"model.call_recorded 1", "ref.retained 1", "turn.updated 1", "turn.ended 1", "model.call_recorded 1",
	}, eventTurns(t, s, a.id, map[string]any{"turn": 1}), "a turn's events, by their turn")
	assert.Equal(t, []string{"session.opened -", "session.updated -"}, eventTurns(t, s, a.id, map[string]any{"turnIsNil": true}))
}

// A turn's events are confined to the caller's tenant like every read of
// events: the tenant's reader finds them, another tenant's key finds
// neither the session nor its events.
func TestATurnsEventsAreTheTenantsOnly(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "event-turns-tenant")
	a.turn("hello")
	reader := s.WithKey(s.NewKey(t, "READER", "acme"))
	assert.Equal(t, []string{"turn.began 1"}, eventTurns(t, reader, a.id, map[string]any{"turn": 1}))
	globex := s.WithKey(s.NewKey(t, "CLIENT", "globex"))
	assert.Equal(t, "NOT_FOUND", globex.ErrorCode(t, `query($id: ID!) { session(id: $id) { events(first: 10, where: {turn: 1}) { totalCount } } }`,
		map[string]any{"id": a.id}))
}

// A write that changes many sessions at once (bulk expiry) writes each
// session's event with that session's current turn.
func TestABulkExpiryWritesEachSessionsTurn(t *testing.T) {
	s := apitest.New(t)
	talked, quiet := newAgent(t, s, "bulk-turns-talked"), newAgent(t, s, "bulk-turns-quiet")
	talked.turn("one")
	talked.turn("two")
	var out struct{ ExpireSessions struct{ Count int } }
	s.MustDo(t, `mutation { expireSessions(input: {where: {externalKeyHasPrefix: "bulk-turns-"}}) { count } }`, nil, &out)
	require.Equal(t, 2, out.ExpireSessions.Count)
	assert.Equal(t, []string{"session.expired 2"}, eventTurns(t, s, talked.id, map[string]any{"kind": "session.expired"}))
	assert.Equal(t, []string{"session.expired -"}, eventTurns(t, s, quiet.id, map[string]any{"kind": "session.expired"}))
}

// sessionEvents carries each event's turn, replayed and live.
func TestSessionEventsCarryTheirTurn(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "live-turns")
	a.turn("one")
	ws := s.DialWS(t, nil)
	ws.Subscribe(`subscription($id: ID!) { sessionEvents(sessionID: $id, after: 0) { sequence kind turn } }`, map[string]any{"id": a.id})
	next := func() string {
		t.Helper()
		m := ws.Read(20 * time.Second)
		require.Equal(t, "next", m.Type, "payload: %s", m.Payload)
		var res struct {
			Data struct {
				SessionEvents struct {
					Kind string
					Turn *int
				}
			}
		}
		require.NoError(t, json.Unmarshal(m.Payload, &res))
		ev := res.Data.SessionEvents
		if ev.Turn == nil {
			return ev.Kind + " -"
		}
		return fmt.Sprintf("%s %d", ev.Kind, *ev.Turn)
	}
	assert.Equal(t, []string{"session.opened -", "turn.began 1"}, []string{next(), next()}, "replayed")
	a.turn("two")
	assert.Equal(t, []string{"turn.ended 1", "turn.began 2"}, []string{next(), next()}, "live")
}
