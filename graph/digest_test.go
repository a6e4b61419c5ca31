package graph_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// dataDigest returns a digest of every row of every table of the server's
// database, by table: a request that failed must leave it as it was. Keys'
// last_used_at is left out, as it records that a key was used, not what a
// request changed; the migrations' own table is left out too.
func dataDigest(t testing.TB, s *apitest.Server) map[string]string {
	t.Helper()
	ctx := context.Background()
	rows, err := s.DB.QueryContext(ctx, `
		SELECT table_name, string_agg(quote_ident(column_name), ', ' ORDER BY ordinal_position)
		FROM information_schema.columns
		WHERE table_schema = 'public' AND table_name <> 'schema_migrations' AND column_name <> 'last_used_at'
		GROUP BY table_name ORDER BY table_name`)
	require.NoError(t, err)
	columns := map[string]string{}
	for rows.Next() {
		var table, cols string
		require.NoError(t, rows.Scan(&table, &cols))
		columns[table] = cols
	}
	require.NoError(t, rows.Err())
	require.NoError(t, rows.Close())
	require.NotEmpty(t, columns)
	out := make(map[string]string, len(columns))
	for table, cols := range columns {
		var count int
		var digest string
		q := fmt.Sprintf(`SELECT count(*), coalesce(md5(string_agg(r::text, '|' ORDER BY r::text)), '')
			FROM (SELECT %s FROM %s) r`, cols, quoteIdent(table))
		require.NoError(t, s.DB.QueryRowContext(ctx, q).Scan(&count, &digest))
		out[table] = fmt.Sprintf("%d rows %s", count, digest)
	}
	return out
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
