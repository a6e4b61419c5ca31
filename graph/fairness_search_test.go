package graph_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// At 100,000 sessions a search of the dashboard's fields is a lookup of
// the pattern's trigrams, not a read of every session: PostgreSQL plans
// ent's ILIKE '%pattern%' (what a ContainsFold filter writes) on the
// trigram index of the column. Before the indexes every search was a
// sequential scan of the table, and a long pattern made each row's match
// slow too (a 100 KB pattern ran 30 s).
func TestASearchOfManySessionsUsesTheTrigramIndex(t *testing.T) {
	s := apitest.New(t)
	s.MustDo(t, `mutation { openSession(input: {tenant: "acme", externalKey: "seed", userID: "seed-user"}) { session { id } } }`, nil, nil)
	db, err := sql.Open("pgx", s.DSN)
	require.NoError(t, err)
	defer db.Close()
	ctx := context.Background()
	// 100,000 copies of the seed session, each with its own id, key and
	// user (the columns a session needs a value for).
	_, err = db.ExecContext(ctx, `INSERT INTO sessions (id, tenant, external_key, user_id, domain, ref_counters,
			gen_counters, metadata, ttl_seconds, created_at, updated_at, last_active_at, expires_at)
		SELECT gen_random_uuid(), s.tenant, 'conversation-' || g, 'user-' || g, s.domain, s.ref_counters,
			s.gen_counters, s.metadata, s.ttl_seconds, s.created_at, s.updated_at, s.last_active_at, s.expires_at
		FROM sessions s, generate_series(1, 100000) g WHERE s.external_key = 'seed'`)
	require.NoError(t, err)
	// What autovacuum does after a bulk insert: merge the indexes' pending
	// lists, and give the planner the table's statistics.
	_, err = db.ExecContext(ctx, `VACUUM ANALYZE sessions`)
	require.NoError(t, err)

	for column, pattern := range map[string]string{"external_key": "%14242%", "user_id": "%77777%"} {
		var plan []string
		rows, err := db.QueryContext(ctx, `EXPLAIN SELECT id FROM sessions WHERE tenant = 'acme' AND `+column+` ILIKE $1 ORDER BY id LIMIT 21`, pattern)
		require.NoError(t, err)
		for rows.Next() {
			var line string
			require.NoError(t, rows.Scan(&line))
			plan = append(plan, line)
		}
		require.NoError(t, rows.Err())
		text := strings.Join(plan, "\n")
		assert.Contains(t, text, "session_"+column+"_trgm", "a search of %s reads its trigram index:\n%s", column, text)
		assert.NotContains(t, text, "Seq Scan", text)
	}

	res := s.Do(t, `{ sessions(first: 5, where: {externalKeyContainsFold: "CONVERSATION-99999"}) { totalCount edges { node { externalKey } } } }`, nil)
	require.Empty(t, res.Errors)
	assert.JSONEq(t, `{"sessions": {"totalCount": 1, "edges": [{"node": {"externalKey": "conversation-99999"}}]}}`, string(res.Data))
}
