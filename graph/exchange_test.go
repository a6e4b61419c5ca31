package graph_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

const (
	recordExchange = `mutation($id: ID!, $u: String!, $a: String!, $summary: ExecutionSummaryInput) {
  recordExchange(input: {sessionID: $id, userMessage: $u, assistantMessage: $a, summary: $summary}) { turn { number status } } }`
	endTurnWithSummary = `mutation($id: ID!, $m: String!, $summary: ExecutionSummaryInput) {
  endTurn(input: {sessionID: $id, assistantMessage: $m, summary: $summary}) { turn { number } } }`
	// sessionRecord is everything a turn leaves on its session: the turns,
	// the session's counts and summaries, the events, and what MESSAGES
	// and REPLY builds show.
	sessionRecord = `query($id: ID!) { session(id: $id) {
  currentTurn tokenCount reasoningSummary
  turns(first: 10) { edges { node { number userMessage assistantMessage assistantSummary userTokens assistantTokens status
    executionSummary { decision goal phase steps { step kind description outcome } } } } }
  events(first: 50) { edges { node { sequence kind payload } } }
  messages: context(node: MESSAGES) { text tokenCount }
  reply: context(node: REPLY) { text tokenCount }
} }`
)

// exchanges are three chat exchanges, each with a summary: the third
// turn's end compresses the first's reasoning into the session.
var exchanges = []struct{ user, assistant string }{
	{"what can I cook with leeks?", "Leek and potato soup, or braised leeks."},
	{"the soup, please: how long?", "About 40 minutes: 10 to soften the leeks, 30 to simmer."},
	{"and to serve four?", "Double the potatoes and use 1.2 litres of stock."},
}

func exchangeSummary(i int) map[string]any {
	return map[string]any{"decision": "plan_direct", "goal": fmt.Sprintf("Answer question %d", i+1), "phase": "exploring",
		"steps": []any{map[string]any{"step": 1, "kind": "analyze", "description": "Answer from memory", "outcome": "answered"}}}
}

// record reads a session's record, with ids and times left out.
func record(t *testing.T, s *apitest.Server, id string) map[string]any {
	t.Helper()
	var out struct {
		Session map[string]any `json:"session"`
	}
	s.MustDo(t, sessionRecord, map[string]any{"id": id}, &out)
	return out.Session
}

func TestAnExchangeRecordsWhatBeginTurnThenEndTurnRecord(t *testing.T) {
	s := apitest.New(t)
	twoCalls, oneCall := newAgent(t, s, "two-calls"), newAgent(t, s, "one-call")
	var separate, together int64 // the round trips of the last exchange, each way
	for i, x := range exchanges {
		before := s.Statements()
		twoCalls.do(beginTurn, map[string]any{"m": x.user})
		twoCalls.do(endTurnWithSummary, map[string]any{"m": x.assistant, "summary": exchangeSummary(i)})
		separate = s.Statements() - before
	}
	for i, x := range exchanges {
		var out struct {
			RecordExchange struct {
				Turn struct {
					Number int
					Status string
				}
			}
		}
		before := s.Statements()
		require.NoError(t, json.Unmarshal(oneCall.do(recordExchange, map[string]any{"u": x.user, "a": x.assistant, "summary": exchangeSummary(i)}), &out))
		together = s.Statements() - before
		assert.Equal(t, i+1, out.RecordExchange.Turn.Number)
		assert.Equal(t, "COMPLETED", out.RecordExchange.Turn.Status)
	}

	want, got := record(t, s, twoCalls.id), record(t, s, oneCall.id)
	require.Len(t, got["events"].(map[string]any)["edges"], 7, "session.opened, then turn.began and turn.ended for each exchange")
	// session.opened names each session's own key; every later event is the same.
	for _, r := range []map[string]any{want, got} {
		delete(r["events"].(map[string]any)["edges"].([]any)[0].(map[string]any)["node"].(map[string]any), "payload")
	}
	assert.Equal(t, want, got, "the same turns, counts, summaries, events and builds")
	assert.NotEmpty(t, got["reasoningSummary"], "the third exchange compressed the first's reasoning")
	// A round trip is one exchange with PostgreSQL: a write's first pgx
	// batch is BEGIN with the lock; its last the turn's insert or update,
	// the session's update and COMMIT (internal/store).
	assert.Equal(t, int64(5), separate, "beginTurn 2 round trips (BEGIN and lock; insert, update and event and COMMIT), endTurn 3 (BEGIN and lock; read the turns clearing; turn, session and events and COMMIT)")
	assert.Equal(t, int64(3), together, "BEGIN and lock; read the turns clearing promoted artifacts; insert, update and events and COMMIT")
}

func TestAnExchangeWhileATurnIsOpenChangesNothing(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "busy")
	a.do(beginTurn, map[string]any{"m": "plan dinners for the week"})
	before := record(t, s, a.id)
	code := s.ErrorCode(t, recordExchange, map[string]any{"id": a.id, "u": "hello?", "a": "hi"})
	assert.Equal(t, "TURN_IN_PROGRESS", code)
	assert.Equal(t, before, record(t, s, a.id))

	// Once the turn ends, the next exchange is the next turn.
	a.do(endTurn, map[string]any{"m": "Monday: dal."})
	var out struct {
		RecordExchange struct{ Turn struct{ Number int } }
	}
	require.NoError(t, json.Unmarshal(a.do(recordExchange, map[string]any{"u": "and Tuesday?", "a": "Leek soup."}), &out))
	assert.Equal(t, 2, out.RecordExchange.Turn.Number)
	// And a turn cannot begin over an exchange: it is closed.
	a.do(beginTurn, map[string]any{"m": "Wednesday?"})
}

func TestAnExchangeOfAnOversizeMessageChangesNothing(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "oversize")
	before := record(t, s, a.id)
	big := make([]byte, 1<<20+1) // one byte over the limit of a message
	for i := range big {
		big[i] = 'a'
	}
	assert.Equal(t, "INPUT_TOO_LARGE", s.ErrorCode(t, recordExchange, map[string]any{"id": a.id, "u": "hi", "a": string(big)}))
	assert.Equal(t, before, record(t, s, a.id))
}

// clearedBy returns the clearedArtifacts of a session's last turn.ended
// event.
func clearedBy(t *testing.T, a *agent) float64 {
	t.Helper()
	out := decode[struct {
		Session struct {
			Events struct {
				Edges []struct {
					Node struct {
						Kind    string
						Payload map[string]any
					}
				}
			}
		}
	}](t, a.do(`query($id: ID!) { session(id: $id) { events(last: 1) { edges { node { kind payload } } } } }`, nil))
	require.Len(t, out.Session.Events.Edges, 1)
	require.Equal(t, "turn.ended", out.Session.Events.Edges[0].Node.Kind)
	return out.Session.Events.Edges[0].Node.Payload["clearedArtifacts"].(float64)
}

// artifactStatus returns the status of a ref's artifact.
func artifactStatus(t *testing.T, a *agent, name string) string {
	t.Helper()
	out := decode[struct {
		Session struct {
			Refs struct {
				Edges []struct {
					Node struct{ Artifact struct{ Status string } }
				}
			}
		}
	}](t, a.do(`query($id: ID!, $r: String!) { session(id: $id) { refs(first: 1, where: {ref: $r}) { edges { node { artifact { status } } } } } }`, map[string]any{"r": name}))
	require.Len(t, out.Session.Refs.Edges, 1)
	return out.Session.Refs.Edges[0].Node.Artifact.Status
}

// A turn's end clears the artifacts saved in it whether the statement that
// reads the turns finds them (and clears as it reads) or finds none, after
// a reset deleted them (and the clearing is a statement of its own).
func TestAnExchangeAndAnEndClearWhatTheTurnSavedWithOrWithoutTurnsToRead(t *testing.T) {
	s := apitest.New(t)
	for _, reset := range []bool{false, true} {
		a := newAgent(t, s, fmt.Sprintf("clears-%v", reset))
		a.do(beginTurn, map[string]any{"m": "a soup?"})
		a.do(`mutation($id: ID!) { recordGenerated(input: {sessionID: $id, entityType: "recipe", content: {name: "Leek Soup"}}) { ref { ref } } }`, nil)
		a.do(endTurn, map[string]any{"m": "Leek soup."})
		promote := func() {
			a.do(`mutation($id: ID!, $e: UUID!) { recordCreated(input: {sessionID: $id, entityType: "recipe", entityID: $e, genRef: "gen_recipe_1"}) { promoted } }`,
				map[string]any{"e": newUUID()})
			require.Equal(t, "PROMOTED", artifactStatus(t, a, "gen_recipe_1"))
		}
		a.do(beginTurn, map[string]any{"m": "save it"})
		promote()
		if reset {
			a.do(`mutation($id: ID!) { resetConversation(input: {sessionID: $id}) { session { id } } }`, nil)
			a.do(recordExchange, map[string]any{"u": "thanks", "a": "Saved."})
		} else {
			a.do(endTurn, map[string]any{"m": "Saved."})
		}
		assert.Equal(t, "CLEARED", artifactStatus(t, a, "gen_recipe_1"), "reset %v", reset)
		assert.Equal(t, float64(1), clearedBy(t, a), "reset %v", reset)
	}
}
