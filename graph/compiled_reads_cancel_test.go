package graph_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
)

// A compiled page's statement runs detached from database/sql's watch of
// its context (internal/readwatch) and still ends with the request: a page
// that waits on a lock past the request's deadline answers TIMEOUT, its
// statement leaves pg_stat_activity while the lock is still held, and the
// pool answers the next page. Both compiled paths: the one-row page
// without cursors and the page with them.
func TestCompiledPagePastItsDeadlineEndsItsStatement(t *testing.T) {
	s := apitest.New(t, func(c *app.Config) { c.RequestTimeout = 500 * time.Millisecond })
	apitest.SessionGraph(t, s, "acme", 3, 1, 1)
	for _, c := range []struct{ name, query, statement string }{
		{"without cursors", `{ sessions(first: 2) { pageInfo { hasNextPage } edges { node { id } } } }`, `SELECT "sessions"."id"::text AS "gql1"%`},
		{"with cursors", `{ sessions(first: 2) { edges { cursor node { id } } } }`, `SELECT "sessions"."id"%`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var before struct {
				Sessions struct{ Edges []any } `json:"sessions"`
			}
			s.MustDo(t, c.query, nil, &before)
			require.Len(t, before.Sessions.Edges, 2)

			holder, err := s.DB.BeginTx(access.System(context.Background()), nil)
			require.NoError(t, err)
			defer holder.Rollback()
			_, err = holder.Exec(`LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE`)
			require.NoError(t, err)

			running := func(waitEvent any) int { // nil: waiting or not
				var n int
				require.NoError(t, s.DB.QueryRow(`SELECT count(*) FROM pg_stat_activity
					WHERE datname = current_database() AND state = 'active' AND query LIKE $1
					AND wait_event_type IS NOT DISTINCT FROM coalesce($2, wait_event_type) AND pid <> pg_backend_pid()`,
					c.statement, waitEvent).Scan(&n))
				return n
			}
			answered := make(chan *apitest.Response, 1)
			go func() { answered <- s.Do(t, c.query, nil) }()
			require.Eventually(t, func() bool { return running("Lock") == 1 }, 5*time.Second, 10*time.Millisecond,
				"the page's statement waits on the lock")
			res := <-answered
			require.Len(t, res.Errors, 1, "%s", res.Body)
			assert.Equal(t, "TIMEOUT", res.Errors[0].Code())
			require.Eventually(t, func() bool { return running(nil) == 0 }, 5*time.Second, 10*time.Millisecond,
				"the timed-out page's statement is gone from pg_stat_activity, the lock still held")

			require.NoError(t, holder.Rollback())
			var after struct {
				Sessions struct{ Edges []any } `json:"sessions"`
			}
			s.MustDo(t, c.query, nil, &after)
			assert.Len(t, after.Sessions.Edges, 2)
		})
	}
}
