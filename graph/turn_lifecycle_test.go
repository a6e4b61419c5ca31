package graph_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent/session"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
)

const (
	beginTurn = `mutation($id: ID!, $m: String!) { beginTurn(input: {sessionID: $id, userMessage: $m}) { turn { number } } }`
	endTurn   = `mutation($id: ID!, $m: String!) { endTurn(input: {sessionID: $id, assistantMessage: $m}) { turn { number } } }`
	failTurn  = `mutation($id: ID!) { failTurn(input: {sessionID: $id, reason: "the model timed out"}) { turn { status } } }`
)

// activity reads a session's activity stamps.
func activity(t *testing.T, s *apitest.Server, id string) (lastActive, expires time.Time) {
	t.Helper()
	se := s.Client.Session.GetX(access.System(context.Background()), uuid.MustParse(id))
	return se.LastActiveAt, se.ExpiresAt
}

// backdate moves a session's activity stamps and its turns' start into the
// past by d, as if d had passed.
func backdate(t *testing.T, s *apitest.Server, id string, d time.Duration) {
	t.Helper()
	ctx := access.System(context.Background())
	// Read, then written as values: Citus refuses a timestamp's arithmetic
	// on a column in an UPDATE (a STABLE operator), under make test-citus.
	var active, expires time.Time
	require.NoError(t, s.DB.QueryRowContext(ctx, `SELECT last_active_at, expires_at FROM sessions WHERE id = $1`, id).
		Scan(&active, &expires))
	_, err := s.DB.ExecContext(ctx, `UPDATE sessions SET last_active_at = $1, expires_at = $2 WHERE id = $3`,
		active.Add(-d), expires.Add(-d), id)
	require.NoError(t, err)
}

// Only committed, successful work is activity. beginTurn does not count
// yet (it keeps the session alive for a TTL from now, but lastActiveAt
// stays), endTurn counts, and a turn that ends in failTurn leaves the
// session's activity exactly as it was, or as the last successful write
// inside the turn left it. Both beginTurn and failTurn stamped it before.
func TestAFailedTurnIsNotActivity(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "failing")
	backdate(t, s, a.id, time.Hour) // an hour ago, so that a new stamp is plainly new
	last0, expires0 := activity(t, s, a.id)

	a.do(beginTurn, map[string]any{"m": "what can I cook?"})
	last, expires := activity(t, s, a.id)
	assert.Equal(t, last0, last, "beginning a turn is not activity yet")
	assert.True(t, expires.After(expires0), "but it keeps the session alive for a TTL from now")

	a.do(failTurn, nil)
	last, expires = activity(t, s, a.id)
	assert.Equal(t, last0, last)
	assert.Equal(t, expires0, expires, "a failed turn leaves the activity as it was")

	a.do(beginTurn, map[string]any{"m": "and now?"})
	a.read("recipes", map[string]any{"id": newUUID(), "name": "Dal"})
	readAt, readExpires := activity(t, s, a.id)
	assert.True(t, readAt.After(last0), "a successful read inside the turn is activity")
	a.do(failTurn, nil)
	last, expires = activity(t, s, a.id)
	assert.Equal(t, readAt, last)
	assert.Equal(t, readExpires, expires, "as the read left it")

	a.do(beginTurn, map[string]any{"m": "one more"})
	a.do(endTurn, map[string]any{"m": "done"})
	last, _ = activity(t, s, a.id)
	assert.True(t, last.After(readAt), "a turn that ends well is activity")
}

// An open turn holds its session: beginTurn and every write of the turn
// push the expiry a TTL ahead, so the reaper does not expire a session
// under a running turn (its background work may outlive its client). A
// turn that fails lets the session expire as if it had never begun; a turn
// left open with no write for a whole TTL lets it expire too (its runtime
// is gone). openSession then names the session it replaces.
func TestAnOpenTurnMeetsExpiry(t *testing.T) {
	s := apitest.New(t, func(c *app.Config) { c.NoReaper = true })
	ctx := access.System(context.Background())
	reap := func() int {
		r, err := s.Engine.Sessions.ReapOnce(ctx)
		require.NoError(t, err)
		return r.Expired
	}
	var opened openedSession
	s.MustDo(t, openSession, map[string]any{"in": map[string]any{"tenant": "acme", "externalKey": "long-turn", "ttlSeconds": 3600}}, &opened)
	a := &agent{t: t, s: s, id: opened.OpenSession.Session.ID}
	backdate(t, s, a.id, 50*time.Minute) // idle for 50 of its 60 minutes
	a.do(beginTurn, map[string]any{"m": "plan a month of dinners"})

	backdate(t, s, a.id, 30*time.Minute) // the turn runs for half an hour
	assert.Zero(t, reap(), "idle for 80 minutes, but under a running turn")
	a.do(failTurn, nil)
	assert.Equal(t, 1, reap(), "the failed turn does not keep it alive")
	status := s.Client.Session.GetX(ctx, uuid.MustParse(a.id)).Status
	assert.Equal(t, session.StatusExpired, status)

	again := open(t, s, map[string]any{"tenant": "acme", "externalKey": "long-turn", "ttlSeconds": 3600}).OpenSession
	assert.True(t, again.Created)
	require.NotNil(t, again.ReplacedSessionID)
	assert.Equal(t, a.id, *again.ReplacedSessionID, "the reaper's expiry is named too")

	b := &agent{t: t, s: s, id: again.Session.ID}
	b.do(beginTurn, map[string]any{"m": "anyone there?"})
	backdate(t, s, b.id, 61*time.Minute)
	assert.Equal(t, 1, reap(), "a turn with no write for a whole TTL does not hold the session")
}

// openSession names the session it replaced however that one expired: its
// TTL ran out unnoticed, the reaper expired it, or an admin did. It named
// only the first before.
func TestOpenSessionNamesTheSessionItReplaced(t *testing.T) {
	s := apitest.New(t, func(c *app.Config) { c.NoReaper = true })
	ctx := access.System(context.Background())
	key := map[string]any{"tenant": "acme", "externalKey": "replaced"}
	first := open(t, s, key).OpenSession
	assert.Nil(t, first.ReplacedSessionID, "nothing to replace")

	s.MustDo(t, `mutation($id: ID!) { expireSession(input: {id: $id}) { session { status } } }`, map[string]any{"id": first.Session.ID}, nil)
	second := open(t, s, key).OpenSession
	require.True(t, second.Created)
	require.NotNil(t, second.ReplacedSessionID)
	assert.Equal(t, first.Session.ID, *second.ReplacedSessionID, "after an admin's expiry")

	s.Client.Session.UpdateOneID(uuid.MustParse(second.Session.ID)).SetExpiresAt(time.Now().Add(-time.Minute)).ExecX(ctx)
	r, err := s.Engine.Sessions.ReapOnce(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, r.Expired)
	third := open(t, s, key).OpenSession
	require.NotNil(t, third.ReplacedSessionID)
	assert.Equal(t, second.Session.ID, *third.ReplacedSessionID, "after the reaper's, the newest expired one")

	s.Client.Session.UpdateOneID(uuid.MustParse(third.Session.ID)).SetExpiresAt(time.Now().Add(-time.Minute)).ExecX(ctx)
	fourth := open(t, s, key).OpenSession
	require.NotNil(t, fourth.ReplacedSessionID)
	assert.Equal(t, third.Session.ID, *fourth.ReplacedSessionID, "after its TTL ran out unnoticed")

	same := open(t, s, key).OpenSession
	assert.False(t, same.Created)
	assert.Nil(t, same.ReplacedSessionID, "a session found, not created, replaces nothing")
	assert.Equal(t, 4, s.Client.Session.Query().CountX(ctx))
}

// A failed turn is not part of the conversation an LLM is shown: MESSAGES
// has neither its user message nor an empty assistant message after it
// (both were there), no other node shows it, nothing counts it as cut, and
// its message's tokens leave the session's count.
func TestAFailedTurnIsNotShownToTheLLM(t *testing.T) {
	s := apitest.New(t)
	var opened openedSession
	s.MustDo(t, openSession, map[string]any{"in": map[string]any{"tenant": "acme", "externalKey": "shown", "tokenizer": "chars4"}}, &opened)
	a := &agent{t: t, s: s, id: opened.OpenSession.Session.ID}
	a.do(beginTurn, map[string]any{"m": "what can I cook?"})
	a.do(endTurn, map[string]any{"m": "Dal."})
	a.do(beginTurn, map[string]any{"m": "the question that broke"})
	a.describe(1, "ANALYZE", "Weigh what broke the pantry")
	a.do(failTurn, nil)
	a.do(beginTurn, map[string]any{"m": "and for dessert?"})
	a.do(endTurn, map[string]any{"m": "Kheer."})

	var out struct {
		Session struct {
			TokenCount int `json:"tokenCount"`
			Messages   struct {
				Messages  []struct{ Role, Content string }
				Text      string
				Truncated int `json:"truncatedTurns"`
			} `json:"messages"`
			Understand, Think, Act, Reply struct {
				Text      string
				Truncated int `json:"truncatedTurns"`
			}
		} `json:"session"`
	}
	s.MustDo(t, `query($id: ID!) { session(id: $id) { tokenCount
		messages: context(node: MESSAGES) { messages { role content } text truncatedTurns }
		understand: context(node: UNDERSTAND) { text truncatedTurns } think: context(node: THINK) { text truncatedTurns }
		act: context(node: ACT) { text truncatedTurns } reply: context(node: REPLY) { text truncatedTurns } } }`,
		map[string]any{"id": a.id}, &out)
	got := out.Session.Messages.Messages
	require.Len(t, got, 4)
	want := [][2]string{{"user", "what can I cook?"}, {"assistant", "Dal."}, {"user", "and for dessert?"}, {"assistant", "Kheer."}}
	for i, m := range got {
		assert.Equal(t, want[i], [2]string{m.Role, m.Content})
	}
	assert.Zero(t, out.Session.Messages.Truncated)
	for node, b := range map[string]struct {
		Text      string
		Truncated int `json:"truncatedTurns"`
	}{"UNDERSTAND": out.Session.Understand, "THINK": out.Session.Think, "ACT": out.Session.Act, "REPLY": out.Session.Reply} {
		assert.NotContains(t, b.Text, "broke", node) // neither its message nor its step
		assert.Zero(t, b.Truncated, node)
	}
	chars4 := func(s string) int { return len([]rune(s)) / 4 }
	assert.Equal(t, chars4("what can I cook?")+chars4("Dal.")+chars4("and for dessert?")+chars4("Kheer."), out.Session.TokenCount)
	assert.Equal(t, 1, s.Client.Session.Query().Where(session.FailedTurns(1)).CountX(access.System(context.Background())))
	assert.False(t, strings.Contains(out.Session.Messages.Text, "broke"))
}
