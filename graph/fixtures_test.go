package graph_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent"
	"sessiongraph/ent/session"
	"sessiongraph/ent/turn"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
)

// seedSessions opens n sessions through the API and then sets fixture
// timestamps directly, which no API can: tests need equal and old times.
func seedSessions(t *testing.T, s *apitest.Server, tenant string, n int) []*ent.Session {
	t.Helper()
	ids := make([]uuid.UUID, n)
	for i := range n {
		var out openedSession
		s.MustDo(t, openSession, map[string]any{"in": map[string]any{
			"tenant": tenant, "externalKey": fmt.Sprintf("%s-%03d", tenant, i), "userID": fmt.Sprintf("user-%d", i%3)}}, &out)
		ids[i] = uuid.MustParse(out.OpenSession.Session.ID)
	}
	return s.Client.Session.Query().Where(session.IDIn(ids...)).AllX(access.System(context.Background()))
}

// addTurns inserts n completed turns into a session.
func addTurns(t *testing.T, s *apitest.Server, sessionID uuid.UUID, n int) {
	t.Helper()
	bulk := make([]*ent.TurnCreate, n)
	for i := range n {
		bulk[i] = s.Client.Turn.Create().SetSessionID(sessionID).SetNumber(i + 1).SetStatus(turn.StatusCompleted).
			SetUserMessage(fmt.Sprintf("message %d", i+1)).SetStartedAt(time.Now())
	}
	require.NoError(t, s.Client.Turn.CreateBulk(bulk...).Exec(access.System(context.Background())))
}

// setCreatedAt backdates sessions; created_at is immutable through ent.
func setCreatedAt(t *testing.T, s *apitest.Server, at time.Time, sessions ...*ent.Session) {
	t.Helper()
	for _, se := range sessions {
		_, err := s.DB.ExecContext(access.System(context.Background()), `UPDATE sessions SET created_at = $1 WHERE id = $2`, at, se.ID)
		require.NoError(t, err)
	}
}
