package pipedb_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/pipedb"
	"sessiongraph/internal/testdb"
	"sessiongraph/migrations"
)

// pools opens the database at dsn twice: through pipedb and through pgx's
// stdlib (for comparison and for watching), with a table of its own.
func pools(t *testing.T, dsn string) (piped, plain *sql.DB) {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	require.NoError(t, err)
	piped = pipedb.OpenDB(*cfg)
	t.Cleanup(func() { _ = piped.Close() })
	plain, err = sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = plain.Close() })
	_, err = plain.Exec(`CREATE TABLE IF NOT EXISTS pipedb_items (id int PRIMARY KEY, v text NOT NULL)`)
	require.NoError(t, err)
	return piped, plain
}

func newDSN(t *testing.T) string {
	return testdb.New(t, migrations.Apply, migrations.Fingerprint())
}

func items(t *testing.T, db *sql.DB) []int {
	t.Helper()
	rows, err := db.Query(`SELECT id FROM pipedb_items ORDER BY id`)
	require.NoError(t, err)
	defer rows.Close()
	var ids []int
	for rows.Next() {
		var id int
		require.NoError(t, rows.Scan(&id))
		ids = append(ids, id)
	}
	require.NoError(t, rows.Err())
	return ids
}

// TestAWriteCostsItsStatementsOnly: BEGIN rides on the first statement and
// COMMIT on the marked last one, over TCP and over a Unix socket; what the
// write did is committed and the connection is idle again.
func TestAWriteCostsItsStatementsOnly(t *testing.T) {
	dsn := newDSN(t)
	for _, transport := range testdb.Transports {
		t.Run(string(transport), func(t *testing.T) {
			piped, plain := pools(t, testdb.NewProxy(t, dsn, transport).DSN)
			_, err := plain.Exec(`DELETE FROM pipedb_items`)
			require.NoError(t, err)
			var n atomic.Int64
			ctx := pipedb.CountRoundTrips(context.Background(), &n)
			tx, err := piped.BeginTx(ctx, nil)
			require.NoError(t, err)
			assert.Equal(t, int64(0), n.Load(), "BEGIN waits for the first statement")
			var pid int
			require.NoError(t, tx.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid))
			_, err = tx.ExecContext(ctx, `INSERT INTO pipedb_items VALUES (1, 'a')`)
			require.NoError(t, err)
			res, err := tx.ExecContext(pipedb.CommitWith(ctx), `INSERT INTO pipedb_items VALUES (2, 'b'), (3, 'c')`)
			require.NoError(t, err)
			affected, err := res.RowsAffected()
			require.NoError(t, err)
			assert.Equal(t, int64(2), affected)
			require.NoError(t, tx.Commit(), "the statement committed; Commit has nothing left to do")
			assert.Equal(t, int64(3), n.Load(), "three round trips: BEGIN with the first statement, one, COMMIT with the last")
			assert.Equal(t, []int{1, 2, 3}, items(t, plain))

			var state string
			require.NoError(t, plain.QueryRow(`SELECT state FROM pg_stat_activity WHERE pid = $1`, pid).Scan(&state))
			assert.Equal(t, "idle", state, "not left in a transaction")

			// A transaction whose only statement carries both ends is one round trip.
			n.Store(0)
			tx, err = piped.BeginTx(ctx, nil)
			require.NoError(t, err)
			_, err = tx.ExecContext(pipedb.CommitWith(ctx), `UPDATE pipedb_items SET v = 'z' WHERE id = 1`)
			require.NoError(t, err)
			require.NoError(t, tx.Commit())
			assert.Equal(t, int64(1), n.Load())
			var v string
			require.NoError(t, plain.QueryRow(`SELECT v FROM pipedb_items WHERE id = 1`).Scan(&v))
			assert.Equal(t, "z", v)
		})
	}
}

// TestRowsReadWithBeginMatchPgxStdlib: a query that carries the BEGIN
// answers the same database/sql values as pgx's stdlib, type by type.
func TestRowsReadWithBeginMatchPgxStdlib(t *testing.T) {
	piped, plain := pools(t, newDSN(t))
	const query = `SELECT true, '\x0102'::bytea, 2::int2, 4::int4, 8::int8, 1.5::float4, 2.5::float8,
		12.34::numeric, 'text'::text, 'vc'::varchar, 'a3bb189e-8bf9-3888-9912-ace4e6543002'::uuid,
		'{"a": [1, 2]}'::jsonb, '{"b": 1}'::json, '2026-11-26 02:30:00.123456+00'::timestamptz,
		'2026-11-26 02:30:00'::timestamp, '2026-11-26'::date, ARRAY['x', 'y']::text[], ARRAY[1, 2]::int8[],
		NULL::text, 42::oid, '1 day'::interval`
	values := func(db *sql.DB) []any {
		tx, err := db.Begin()
		require.NoError(t, err)
		defer func() { _ = tx.Rollback() }()
		rows, err := tx.Query(query)
		require.NoError(t, err)
		defer rows.Close()
		cols, err := rows.Columns()
		require.NoError(t, err)
		out := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range out {
			ptrs[i] = &out[i]
		}
		require.True(t, rows.Next())
		require.NoError(t, rows.Scan(ptrs...))
		require.False(t, rows.Next())
		require.NoError(t, rows.Err())
		return out
	}
	want, got := values(plain), values(piped)
	require.Len(t, got, len(want))
	for i := range want {
		assert.Equal(t, want[i], got[i], "column %d", i+1)
	}
}

// TestAFailedStatementCommitsNothing: an error in the statement that
// carries the BEGIN, or in the one that carries the COMMIT (a constraint
// violation), answers PostgreSQL's error; nothing of the write is
// committed, a Commit after it fails, and the connection serves the next
// write.
func TestAFailedStatementCommitsNothing(t *testing.T) {
	piped, plain := pools(t, newDSN(t))
	ctx := context.Background()
	piped.SetMaxOpenConns(1)

	tx, err := piped.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = tx.ExecContext(ctx, `INSERT INTO pipedb_items VALUES (1, NULL)`)
	var pgErr *pgconn.PgError
	require.ErrorAs(t, err, &pgErr)
	assert.Equal(t, "23502", pgErr.Code, "not_null_violation, as PostgreSQL answered it")
	require.Error(t, tx.Commit(), "the transaction failed: its commit is no success")
	assert.Empty(t, items(t, plain))

	tx, err = piped.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = tx.ExecContext(ctx, `INSERT INTO pipedb_items VALUES (1, 'a')`)
	require.NoError(t, err)
	_, err = tx.ExecContext(pipedb.CommitWith(ctx), `INSERT INTO pipedb_items VALUES (2, 'b'), (1, 'again')`)
	require.ErrorAs(t, err, &pgErr)
	assert.Equal(t, "23505", pgErr.Code, "unique_violation, as PostgreSQL answered it")
	err = tx.Commit()
	assert.ErrorIs(t, err, pgx.ErrTxCommitRollback, "the COMMIT that followed the error was skipped; committing now rolls back")
	assert.Empty(t, items(t, plain), "neither the first insert nor the second")

	tx, err = piped.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = tx.ExecContext(ctx, `INSERT INTO pipedb_items VALUES (1, 'a')`)
	require.NoError(t, err)
	_, err = tx.ExecContext(pipedb.CommitWith(ctx), `INSERT INTO pipedb_items VALUES (1, 'again')`)
	require.ErrorAs(t, err, &pgErr)
	require.NoError(t, tx.Rollback())
	assert.Empty(t, items(t, plain))

	// A syntax error in the statement that carries the BEGIN.
	tx, err = piped.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = tx.ExecContext(ctx, `INSERT INTO nowhere VALUES (1)`)
	require.ErrorAs(t, err, &pgErr)
	assert.Equal(t, "42P01", pgErr.Code)
	require.NoError(t, tx.Rollback())

	// The one connection is idle and serves the next write.
	tx, err = piped.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = tx.ExecContext(pipedb.CommitWith(ctx), `INSERT INTO pipedb_items VALUES (7, 'g')`)
	require.NoError(t, err)
	require.NoError(t, tx.Commit())
	assert.Equal(t, []int{7}, items(t, plain))
}

// blockedWrite begins a write on piped that inserts row 1, then sends its
// last statement with the COMMIT while the statement waits for an advisory
// lock plain holds; it returns the backend's pid once PostgreSQL shows the
// statement waiting, and the channel the statement's error arrives on.
func blockedWrite(t *testing.T, ctx context.Context, piped, plain *sql.DB) (int, <-chan error) {
	t.Helper()
	holder, err := plain.Conn(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() { _ = holder.Close() })
	_, err = holder.ExecContext(context.Background(), `SELECT pg_advisory_lock(4242)`)
	require.NoError(t, err)

	tx, err := piped.BeginTx(ctx, nil)
	require.NoError(t, err)
	var pid int
	require.NoError(t, tx.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid))
	_, err = tx.ExecContext(ctx, `INSERT INTO pipedb_items VALUES (1, 'a')`)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := tx.ExecContext(pipedb.CommitWith(ctx), `INSERT INTO pipedb_items SELECT 2, 'b' FROM pg_advisory_xact_lock(4242)`)
		if err == nil {
			err = tx.Commit()
		} else {
			_ = tx.Rollback()
		}
		done <- err
	}()
	require.Eventually(t, func() bool {
		var waiting bool
		err := plain.QueryRow(`SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = $1`, pid).Scan(&waiting)
		return err == nil && waiting
	}, 30*time.Second, 10*time.Millisecond, "the last statement waits for the lock")
	return pid, done
}

// TestAConnectionLostBeforeTheAnswerReportsTheFailure: the backend is
// terminated after the statement and its COMMIT were sent and before
// PostgreSQL answered: the write reports an error, nothing is committed,
// and the pool serves the next write on a new connection.
func TestAConnectionLostBeforeTheAnswerReportsTheFailure(t *testing.T) {
	piped, plain := pools(t, newDSN(t))
	pid, done := blockedWrite(t, context.Background(), piped, plain)
	_, err := plain.Exec(`SELECT pg_terminate_backend($1::int)`, pid)
	require.NoError(t, err)
	require.Error(t, <-done, "a write whose COMMIT was never answered is no success")
	assert.Empty(t, items(t, plain))

	tx, err := piped.Begin()
	require.NoError(t, err)
	_, err = tx.ExecContext(pipedb.CommitWith(context.Background()), `INSERT INTO pipedb_items VALUES (3, 'c')`)
	require.NoError(t, err)
	require.NoError(t, tx.Commit())
	assert.Equal(t, []int{3}, items(t, plain))
}

// TestAConnectionLostBetweenStatementAndCommit: the backend is terminated
// after the write's first statement answered and before the statement
// carrying the COMMIT is sent: that statement fails and nothing is
// committed.
func TestAConnectionLostBetweenStatementAndCommit(t *testing.T) {
	piped, plain := pools(t, newDSN(t))
	ctx := context.Background()
	tx, err := piped.BeginTx(ctx, nil)
	require.NoError(t, err)
	var pid int
	require.NoError(t, tx.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid))
	_, err = tx.ExecContext(ctx, `INSERT INTO pipedb_items VALUES (1, 'a')`)
	require.NoError(t, err)
	var terminated bool
	require.NoError(t, plain.QueryRow(`SELECT pg_terminate_backend($1::int)`, pid).Scan(&terminated))
	require.True(t, terminated)
	_, err = tx.ExecContext(pipedb.CommitWith(ctx), `INSERT INTO pipedb_items VALUES (2, 'b')`)
	require.Error(t, err)
	if err == nil {
		require.NoError(t, tx.Commit())
	} else {
		_ = tx.Rollback()
	}
	assert.Empty(t, items(t, plain))
}

// TestAWriteCancelledMidWayCommitsNothing: the context is cancelled while
// the statement carrying the COMMIT waits in PostgreSQL: the write answers
// the cancellation and nothing is committed.
func TestAWriteCancelledMidWayCommitsNothing(t *testing.T) {
	piped, plain := pools(t, newDSN(t))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, done := blockedWrite(t, ctx, piped, plain)
	cancel()
	err := <-done
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.Canceled) || pgconn.Timeout(err), "the cancellation, not a success: %v", err)
	assert.Empty(t, items(t, plain))
}

// TestAStatementSentLaterGoesWithTheNextExchange: a statement marked Later
// costs no round trip; it runs ahead of the next statement, or of the
// COMMIT, in that exchange; its error is that exchange's answer and
// nothing of the write is committed; a rollback never sends it.
func TestAStatementSentLaterGoesWithTheNextExchange(t *testing.T) {
	piped, plain := pools(t, newDSN(t))
	var n atomic.Int64
	ctx := pipedb.CountRoundTrips(context.Background(), &n)

	tx, err := piped.BeginTx(ctx, nil)
	require.NoError(t, err)
	res, err := tx.ExecContext(pipedb.Later(ctx), `INSERT INTO pipedb_items VALUES (1, 'a')`)
	require.NoError(t, err)
	_, err = res.RowsAffected()
	assert.Error(t, err, "its row count is not known when it is queued")
	assert.Equal(t, int64(0), n.Load())
	var seen int
	require.NoError(t, tx.QueryRowContext(ctx, `SELECT count(*) FROM pipedb_items`).Scan(&seen))
	assert.Equal(t, 1, seen, "the queued insert ran before the query, in its exchange")
	_, err = tx.ExecContext(pipedb.Later(ctx), `INSERT INTO pipedb_items VALUES (2, 'b')`)
	require.NoError(t, err)
	_, err = tx.ExecContext(pipedb.CommitWith(ctx), `UPDATE pipedb_items SET v = v || '!'`)
	require.NoError(t, err)
	require.NoError(t, tx.Commit())
	assert.Equal(t, int64(2), n.Load(), "BEGIN, insert and query; insert, update and COMMIT")
	assert.Equal(t, []int{1, 2}, items(t, plain))

	// Queued statements go with the transaction's own COMMIT.
	n.Store(0)
	tx, err = piped.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = tx.ExecContext(pipedb.Later(ctx), `INSERT INTO pipedb_items VALUES (3, 'c')`)
	require.NoError(t, err)
	require.NoError(t, tx.Commit())
	assert.Equal(t, int64(1), n.Load())
	assert.Equal(t, []int{1, 2, 3}, items(t, plain))

	// A queued statement's error is the next exchange's answer.
	tx, err = piped.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = tx.ExecContext(ctx, `INSERT INTO pipedb_items VALUES (4, 'd')`)
	require.NoError(t, err)
	_, err = tx.ExecContext(pipedb.Later(ctx), `INSERT INTO pipedb_items VALUES (1, 'again')`)
	require.NoError(t, err)
	_, err = tx.ExecContext(pipedb.CommitWith(ctx), `INSERT INTO pipedb_items VALUES (5, 'e')`)
	var pgErr *pgconn.PgError
	require.ErrorAs(t, err, &pgErr)
	assert.Equal(t, "23505", pgErr.Code)
	require.NoError(t, tx.Rollback())
	assert.Equal(t, []int{1, 2, 3}, items(t, plain), "neither 4, nor 5")

	// ... and so is the COMMIT's, when the COMMIT is next.
	tx, err = piped.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = tx.ExecContext(pipedb.Later(ctx), `INSERT INTO pipedb_items VALUES (2, 'again')`)
	require.NoError(t, err)
	require.ErrorAs(t, tx.Commit(), &pgErr)
	assert.Equal(t, "23505", pgErr.Code)

	// A rollback drops what was queued.
	tx, err = piped.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = tx.ExecContext(ctx, `INSERT INTO pipedb_items VALUES (6, 'f')`)
	require.NoError(t, err)
	_, err = tx.ExecContext(pipedb.Later(ctx), `INSERT INTO pipedb_items VALUES (7, 'g')`)
	require.NoError(t, err)
	require.NoError(t, tx.Rollback())
	assert.Equal(t, []int{1, 2, 3}, items(t, plain))

	// The pool's connections are idle, none left in a transaction.
	var busy int
	require.NoError(t, plain.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'`).Scan(&busy))
	assert.Equal(t, 0, busy)
}

// TestAConnectionKeepsABoundedSetOfStatements: a connection prepares each
// statement text its exchanges send once, and keeps the most recently used
// 256; the ones it drops are closed in PostgreSQL with its next exchange.
func TestAConnectionKeepsABoundedSetOfStatements(t *testing.T) {
	piped, _ := pools(t, newDSN(t))
	piped.SetMaxOpenConns(1)
	ctx := context.Background()
	prepared := func() int {
		var n int
		require.NoError(t, piped.QueryRow(`SELECT count(*) FROM pg_prepared_statements WHERE name LIKE 'pipedb\_%'`).Scan(&n))
		return n
	}
	for i := range 300 {
		tx, err := piped.BeginTx(ctx, nil)
		require.NoError(t, err)
		var got int
		require.NoError(t, tx.QueryRowContext(ctx, fmt.Sprintf(`SELECT %d`, i)).Scan(&got))
		assert.Equal(t, i, got)
		require.NoError(t, tx.Commit())
	}
	assert.LessOrEqual(t, prepared(), 257, "256 kept, and the one dropped by the last exchange closed with the next")
	assert.GreaterOrEqual(t, prepared(), 256)
}
