package readwatch

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/testdb"
)

type key struct{}

// A detached context keeps its origin's values, deadline and error, has no
// Done channel (so database/sql and pgx start no watch of it), and leads
// the Tracer to its origin through values added on the way.
func TestDetachedContextIsTheOriginWithoutItsDoneChannel(t *testing.T) {
	config, err := pgx.ParseConfig("postgres://localhost/x")
	assert.NoError(t, err)
	Install(config)
	assert.IsType(t, Tracer{}, config.Tracer)

	origin, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	d := Detach(origin)
	assert.Nil(t, d.Done())
	assert.Equal(t, "v", d.Value(key{}))
	wrapped := context.WithValue(d, struct{}{}, 1)
	assert.Nil(t, wrapped.Done())
	assert.Equal(t, origin, wrapped.Value(originKey{}).(*detached).Context)
	assert.NoError(t, d.Err())
	cancel()
	assert.ErrorIs(t, d.Err(), context.Canceled)

	// A context that cannot end needs no detaching.
	assert.Equal(t, context.Background(), Detach(context.Background()))
}

// Statements run with a detached context, two at once on two connections,
// end when the context they came from ends: both answer context.Canceled,
// PostgreSQL runs neither any more, and the pool serves the next statement
// run detached.
func TestDetachedStatementsEndWithTheirContext(t *testing.T) {
	dsn := testdb.New(t, func(context.Context, string) error { return nil }, "readwatch-empty")
	config, err := pgx.ParseConfig(dsn)
	require.NoError(t, err)
	Install(config)
	db := stdlib.OpenDB(*config)
	defer db.Close()

	ctx, cancel := context.WithCancel(context.Background())
	read := Detach(ctx)
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			var v string
			errs <- db.QueryRowContext(read, "SELECT pg_sleep(60)::text").Scan(&v)
		}()
	}
	sleeping := func() int {
		var n int
		require.NoError(t, db.QueryRow(`SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND state = 'active' AND query LIKE 'SELECT pg_sleep(60)%'`).Scan(&n))
		return n
	}
	require.Eventually(t, func() bool { return sleeping() == 2 }, 10*time.Second, 10*time.Millisecond, "both statements run")
	cancel()
	for range 2 {
		assert.ErrorIs(t, <-errs, context.Canceled)
	}
	require.Eventually(t, func() bool { return sleeping() == 0 }, 10*time.Second, 10*time.Millisecond, "PostgreSQL ran them no further")

	next, stop := context.WithCancel(context.Background())
	defer stop()
	var one int
	require.NoError(t, db.QueryRowContext(Detach(next), "SELECT 1").Scan(&one))
	assert.Equal(t, 1, one)
}
