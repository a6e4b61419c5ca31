package dbhook_test

import (
	"context"
	"database/sql"
	"testing"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/dbhook"
	"sessiongraph/internal/testdb"
	"sessiongraph/migrations"
)

type ctxKey struct{}

// TestEveryRoundTripGoesThroughTheHook runs a transaction and a statement
// outside one, and sees each round trip once, in order, with its SQL; COMMIT
// gets the context that began the transaction.
func TestEveryRoundTripGoesThroughTheHook(t *testing.T) {
	db, err := sql.Open("pgx", testdb.New(t, migrations.Apply, migrations.Fingerprint()))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })

	var seen []string
	var commitCtx context.Context
	drv := dbhook.Wrap(entsql.OpenDB(dialect.Postgres, db), func(ctx context.Context, kind dbhook.Kind, query string, run func(context.Context) error) error {
		seen = append(seen, string(kind)+" "+query)
		if kind == dbhook.Commit {
			commitCtx = ctx
		}
		return run(ctx)
	})

	ctx := context.WithValue(context.Background(), ctxKey{}, "request")
	tx, err := drv.Tx(ctx)
	require.NoError(t, err)
	var rows entsql.Rows
	require.NoError(t, tx.Query(ctx, "SELECT 1", []any{}, &rows))
	rows.Close()
	require.NoError(t, tx.Exec(ctx, "SELECT 2", []any{}, nil))
	require.NoError(t, tx.Commit())
	require.NoError(t, drv.Exec(ctx, "SELECT 3", []any{}, nil))

	assert.Equal(t, []string{"begin ", "query SELECT 1", "exec SELECT 2", "commit ", "exec SELECT 3"}, seen)
	require.NotNil(t, commitCtx)
	assert.Equal(t, "request", commitCtx.Value(ctxKey{}))
}
