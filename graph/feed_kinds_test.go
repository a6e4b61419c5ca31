package graph_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/engine"
)

const feedSub = `subscription($after: String, $kinds: [String!]) { sessionsChanged(after: $after, kinds: $kinds) { sessionID kind } }`

// feedCursor is where the feed of every session stands now.
func feedCursor(t *testing.T, s *apitest.Server) string {
	t.Helper()
	var out struct{ SessionsChangedCursor string }
	s.MustDo(t, `{ sessionsChangedCursor }`, nil, &out)
	return out.SessionsChangedCursor
}

// aTurnAndAnUpdate opens a session, begins and ends a turn on it, then
// updates it: a lifecycle event on either side of the turn's events.
func aTurnAndAnUpdate(t *testing.T, s *apitest.Server) string {
	t.Helper()
	a := newAgent(t, s, "feed-kinds")
	a.turn("what can I cook?")
	a.do(`mutation($id: ID!) { endTurn(input: {sessionID: $id, assistantMessage: "rice"}) { turn { number } } }`, nil)
	touch(t, s, a.id, 1)
	return a.id
}

// feedKindsOf reads n events of the feed and returns their kinds.
func feedKindsOf(t *testing.T, ws *apitest.WS, session string, n int) []string {
	t.Helper()
	var kinds []string
	for range n {
		ev := nextEvent(t, ws, "sessionsChanged")
		require.Equal(t, session, ev.SessionID)
		kinds = append(kinds, ev.Kind)
	}
	return kinds
}

// failedFeed reads the one result that holds the error of a subscription
// whose resolver refused it, and its completion; it returns the error.
func failedFeed(t *testing.T, ws *apitest.WS, id string) apitest.Error {
	t.Helper()
	m := ws.Read(10 * time.Second)
	require.Equal(t, id, m.ID)
	require.Equal(t, "next", m.Type, "payload: %s", m.Payload)
	var res struct {
		Data   map[string]any
		Errors []apitest.Error
	}
	require.NoError(t, json.Unmarshal(m.Payload, &res))
	require.Len(t, res.Errors, 1)
	assert.Empty(t, res.Data["sessionsChanged"], "no data")
	assert.Equal(t, "complete", ws.Read(10*time.Second).Type)
	return res.Errors[0]
}

// A list that shows turn counts asks for the turn kinds too, and hears a
// turn begin and end; kinds it did not ask for (refs, turn.updated) stay out.
func TestSessionsChangedCarriesTheKindsAskedFor(t *testing.T) {
	s := apitest.New(t)
	ws := s.DialWS(t, nil)
	ws.Subscribe(feedSub, map[string]any{"after": feedCursor(t, s), "kinds": []string{
		"session.opened", "session.updated", "session.expired", "session.deleted", "turn.began", "turn.ended", "turn.failed"}})
	id := aTurnAndAnUpdate(t, s)
	assert.Equal(t, []string{"session.opened", "turn.began", "turn.ended", "session.updated"}, feedKindsOf(t, ws, id, 4))
}

// Without kinds the feed is what it always was: lifecycle events only.
func TestSessionsChangedWithoutKindsCarriesTheLifecycleOnly(t *testing.T) {
	s := apitest.New(t)
	cursor := feedCursor(t, s)
	omitted := s.DialWS(t, nil)
	omitted.Subscribe(`subscription($after: String) { sessionsChanged(after: $after) { sessionID kind } }`, map[string]any{"after": cursor})
	null := s.DialWS(t, nil)
	null.Subscribe(feedSub, map[string]any{"after": cursor, "kinds": nil})
	id := aTurnAndAnUpdate(t, s)
	for _, ws := range []*apitest.WS{omitted, null} {
		assert.Equal(t, []string{"session.opened", "session.updated"}, feedKindsOf(t, ws, id, 2), "no turn event between them")
	}
}

// A kind the server does not know is a mistake the client is told about,
// with the kinds it may ask for; so are an empty list and an endless one.
func TestSessionsChangedRefusesUnknownKinds(t *testing.T) {
	s := apitest.New(t)
	ws := s.DialWS(t, nil)

	refused := failedFeed(t, ws, ws.Subscribe(feedSub, map[string]any{"kinds": []string{"turn.began", "turn.begun"}}))
	assert.Equal(t, "BAD_USER_INPUT", refused.Code())
	assert.Contains(t, refused.Message, `"turn.begun" is not a kind of session event`)
	for _, k := range engine.FeedKinds {
		assert.Contains(t, refused.Message, k, "the message lists the known kinds")
	}
	assert.NotContains(t, refused.Message, "apikey.revoked", "a key's revocation is no session's event")

	refused = failedFeed(t, ws, ws.Subscribe(feedSub, map[string]any{"kinds": []string{"apikey.revoked"}}))
	assert.Equal(t, "BAD_USER_INPUT", refused.Code())

	refused = failedFeed(t, ws, ws.Subscribe(feedSub, map[string]any{"kinds": []string{}}))
	assert.Equal(t, "BAD_USER_INPUT", refused.Code())
	assert.Equal(t, "kinds is empty: name the kinds you want, or omit kinds for the lifecycle kinds", refused.Message)

	many := make([]string, engine.MaxFeedKinds+1)
	for i := range many {
		many[i] = engine.FeedKinds[i%len(engine.FeedKinds)]
	}
	refused = failedFeed(t, ws, ws.Subscribe(feedSub, map[string]any{"kinds": many}))
	assert.Equal(t, "BAD_USER_INPUT", refused.Code())
	assert.Equal(t, fmt.Sprintf("kinds has %d entries; at most %d may be given", len(many), engine.MaxFeedKinds), refused.Message)
}
