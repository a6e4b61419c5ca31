package graph_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent/event"
	"sessiongraph/ent/session"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
)

func TestExpireSessionThenWritesFailAndTheKeyOpensAFreshSession(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "expire-me")
	a.turn("hi")
	var out struct {
		ExpireSession struct {
			Session struct {
				Status    string     `json:"status"`
				ExpiredAt *time.Time `json:"expiredAt"`
			} `json:"session"`
		} `json:"expireSession"`
	}
	s.MustDo(t, `mutation($id: ID!) { expireSession(input: {id: $id}) { session { status expiredAt } } }`, map[string]any{"id": a.id}, &out)
	assert.Equal(t, "EXPIRED", out.ExpireSession.Session.Status)
	require.NotNil(t, out.ExpireSession.Session.ExpiredAt)

	ctx := access.System(context.Background())
	events := s.Client.Event.Query().CountX(ctx)
	assert.Equal(t, "SESSION_EXPIRED", a.code(`mutation($id: ID!) { endTurn(input: {sessionID: $id, assistantMessage: "late"}) { turn { number } } }`, nil))
	assert.Equal(t, events, s.Client.Event.Query().CountX(ctx), "a refused write changes nothing")
	var read struct {
		Session struct{ Status string } `json:"session"`
	}
	s.MustDo(t, `query($id: ID!) { session(id: $id) { status } }`, map[string]any{"id": a.id}, &read)
	assert.Equal(t, "EXPIRED", read.Session.Status, "an expired session stays readable")

	reopened := open(t, s, map[string]any{"tenant": "acme", "externalKey": "expire-me"}).OpenSession
	assert.True(t, reopened.Created)
	assert.NotEqual(t, a.id, reopened.Session.ID)

	s.MustDo(t, `mutation($id: ID!) { expireSession(input: {id: $id}) { session { status } } }`, map[string]any{"id": a.id}, nil)
	assert.Equal(t, 1, s.Client.Event.Query().Where(event.Kind("session.expired"), event.SessionID(uuid.MustParse(a.id))).CountX(ctx),
		"expiring an expired session changes nothing")
	assert.Equal(t, "NOT_FOUND", s.ErrorCode(t, `mutation { expireSession(input: {id: "00000000-0000-4000-8000-000000000000"}) { session { status } } }`, nil))
}

func TestExpireSessionsIsOneBatchWhateverTheCount(t *testing.T) {
	statements := func(n int) int64 {
		s := apitest.New(t)
		seedSessions(t, s, "acme", n)
		seedSessions(t, s, "globex", 2)
		before := s.Statements()
		var out struct {
			ExpireSessions struct{ Count int } `json:"expireSessions"`
		}
		s.MustDo(t, `mutation { expireSessions(input: {where: {tenant: "acme"}}) { count } }`, nil, &out)
		used := s.Statements() - before
		assert.Equal(t, n, out.ExpireSessions.Count)
		ctx := access.System(context.Background())
		assert.Equal(t, n, s.Client.Session.Query().Where(session.StatusEQ(session.StatusExpired)).CountX(ctx))
		assert.Equal(t, 2, s.Client.Session.Query().Where(session.Tenant("globex"), session.StatusEQ(session.StatusActive)).CountX(ctx))
		assert.Equal(t, n, s.Client.Event.Query().Where(event.Kind("session.expired")).CountX(ctx), "one event each")
		return used
	}
	assert.Equal(t, statements(3), statements(30), "the statements do not grow with the sessions")
}

func TestDeleteAndPurgeRemoveEveryRow(t *testing.T) {
	s := apitest.New(t)
	ctx := access.System(context.Background())
	a := newAgent(t, s, "delete-me")
	a.turn("hi")
	a.read("recipes", map[string]any{"id": newUUID(), "name": "Dal"})
	var deleted struct {
		DeleteSession struct {
			DeletedSessionID string `json:"deletedSessionID"`
		} `json:"deleteSession"`
	}
	s.MustDo(t, `mutation($id: ID!) { deleteSession(input: {id: $id}) { deletedSessionID } }`, map[string]any{"id": a.id}, &deleted)
	assert.Equal(t, a.id, deleted.DeleteSession.DeletedSessionID)
	assert.Zero(t, s.Client.Turn.Query().CountX(ctx))
	assert.Zero(t, s.Client.Ref.Query().CountX(ctx))
	kinds := []string{}
	for _, e := range s.Client.Event.Query().Where(event.SessionID(uuid.MustParse(a.id))).AllX(ctx) {
		kinds = append(kinds, e.Kind)
	}
	assert.Equal(t, []string{"session.deleted"}, kinds, "only the deletion outlives the session")

	old := seedSessions(t, s, "acme", 3)
	s.Client.Session.Update().Where(session.IDIn(old[0].ID, old[1].ID)).
		SetStatus(session.StatusExpired).SetExpiredAt(time.Now().Add(-8 * 24 * time.Hour)).ExecX(ctx)
	var purged struct {
		PurgeExpired struct{ Count int } `json:"purgeExpired"`
	}
	s.MustDo(t, `mutation { purgeExpired(input: {}) { count } }`, nil, &purged)
	assert.Equal(t, 2, purged.PurgeExpired.Count, "expired longer ago than the 7-day retention")
	assert.Equal(t, 1, s.Client.Session.Query().CountX(ctx))
	assert.Equal(t, "BAD_USER_INPUT", s.ErrorCode(t, `mutation { purgeExpired(input: {olderThanSeconds: -1}) { count } }`, nil))
}

// The reaper expires idle sessions on one replica at a time: while another
// replica holds its lock, a round does nothing.
func TestReaperRunsOnOneReplicaAtATime(t *testing.T) {
	noReaper := func(c *app.Config) { c.NoReaper = true }
	a := apitest.New(t, noReaper)
	b := apitest.Replica(t, a.DSN, noReaper)
	ctx := access.System(context.Background())
	idle := seedSessions(t, a, "acme", 4)
	a.Client.Session.Update().Where(session.IDIn(idle[0].ID, idle[1].ID)).SetExpiresAt(time.Now().Add(-time.Minute)).ExecX(ctx)

	held, err := a.DB.BeginTx(ctx, nil)
	require.NoError(t, err)
	var got bool
	require.NoError(t, held.QueryRow(`SELECT pg_try_advisory_xact_lock($1)`, 0x5e5510_0002).Scan(&got))
	require.True(t, got, "replica A's round is under way")
	r, err := b.Engine.Sessions.ReapOnce(ctx)
	require.NoError(t, err)
	assert.False(t, r.Ran, "replica B skips the round")
	assert.Zero(t, a.Client.Session.Query().Where(session.StatusEQ(session.StatusExpired)).CountX(ctx))
	require.NoError(t, held.Commit())

	r, err = b.Engine.Sessions.ReapOnce(ctx)
	require.NoError(t, err)
	assert.True(t, r.Ran)
	assert.Equal(t, 2, r.Expired, "only the sessions past their TTL")
	assert.Equal(t, 2, a.Client.Session.Query().Where(session.StatusEQ(session.StatusExpired)).CountX(ctx))
	assert.Equal(t, fmt.Sprint([]string{"session.expired", "session.expired"}), fmt.Sprint(kindsOf(t, a, "session.expired")))
}

func kindsOf(t *testing.T, s *apitest.Server, kind string) []string {
	t.Helper()
	out := []string{}
	for _, e := range s.Client.Event.Query().Where(event.Kind(kind)).AllX(access.System(context.Background())) {
		out = append(out, e.Kind)
	}
	return out
}
