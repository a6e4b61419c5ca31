package pipedb_test

import (
	"context"
	"database/sql"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/pipedb"
	"sessiongraph/internal/testdb"
)

// lockThenRead is a write's start as the engine makes it: a lock on a row,
// then the rows the lock guards.
const (
	lockItem  = `SELECT v FROM pipedb_items WHERE id = $1 FOR UPDATE`
	readItems = `SELECT id, v FROM pipedb_items WHERE id = ANY($1::int[]) ORDER BY id`
)

func pairs(t *testing.T, rows *sql.Rows) map[int]string {
	t.Helper()
	out, err := scanPairs(rows)
	require.NoError(t, err)
	return out
}

// scanPairs reads rows of (id, v) and closes them.
func scanPairs(rows *sql.Rows) (map[int]string, error) {
	defer rows.Close()
	out := map[int]string{}
	for rows.Next() {
		var id int
		var v string
		if err := rows.Scan(&id, &v); err != nil {
			return nil, err
		}
		out[id] = v
	}
	return out, rows.Err()
}

// TestAReadSentAheadAnswersTheNextQuery: the read rides on the exchange
// that begins the transaction, over TCP and a Unix socket; the Query of
// the same text and arguments is answered with its rows, no round trip,
// and they are the rows a Query would read.
func TestAReadSentAheadAnswersTheNextQuery(t *testing.T) {
	dsn := newDSN(t)
	for _, transport := range testdb.Transports {
		t.Run(string(transport), func(t *testing.T) {
			piped, plain := pools(t, testdb.NewProxy(t, dsn, transport).DSN)
			_, err := plain.Exec(`DELETE FROM pipedb_items; INSERT INTO pipedb_items VALUES (1, 'a'), (2, 'b'), (3, 'c')`)
			require.NoError(t, err)
			var n atomic.Int64
			ctx := pipedb.CountRoundTrips(context.Background(), &n)
			tx, err := piped.BeginTx(ctx, nil)
			require.NoError(t, err)
			var v string
			require.NoError(t, tx.QueryRowContext(pipedb.ReadAhead(ctx, readItems, []int32{2, 3, 9}), lockItem, 1).Scan(&v))
			assert.Equal(t, "a", v)
			assert.Equal(t, int64(1), n.Load(), "BEGIN, the lock and the read: one round trip")
			rows, err := tx.QueryContext(ctx, readItems, []int32{2, 3, 9})
			require.NoError(t, err)
			assert.Equal(t, map[int]string{2: "b", 3: "c"}, pairs(t, rows))
			assert.Equal(t, int64(1), n.Load(), "answered by the read sent ahead")
			// Once: the same Query again is sent.
			rows, err = tx.QueryContext(ctx, readItems, []int32{2, 3, 9})
			require.NoError(t, err)
			assert.Equal(t, map[int]string{2: "b", 3: "c"}, pairs(t, rows))
			assert.Equal(t, int64(2), n.Load())
			require.NoError(t, tx.Commit())
		})
	}
}

// TestAReadSentAheadIsDroppedByAnyOtherStatement: a Query of other
// arguments or text, or an Exec, between the lock and the read drops the
// rows read ahead, and the read then sees what the transaction wrote.
func TestAReadSentAheadIsDroppedByAnyOtherStatement(t *testing.T) {
	piped, plain := pools(t, newDSN(t))
	reset := func() {
		_, err := plain.Exec(`DELETE FROM pipedb_items; INSERT INTO pipedb_items VALUES (1, 'a'), (2, 'b')`)
		require.NoError(t, err)
	}
	ctx := context.Background()
	begin := func() *sql.Tx {
		tx, err := piped.BeginTx(ctx, nil)
		require.NoError(t, err)
		var v string
		require.NoError(t, tx.QueryRowContext(pipedb.ReadAhead(ctx, readItems, []int32{1, 2}), lockItem, 1).Scan(&v))
		return tx
	}
	read := func(tx *sql.Tx, ids []int32) map[int]string {
		rows, err := tx.QueryContext(ctx, readItems, ids)
		require.NoError(t, err)
		return pairs(t, rows)
	}

	reset()
	tx := begin()
	_, err := tx.ExecContext(ctx, `UPDATE pipedb_items SET v = 'B' WHERE id = 2`)
	require.NoError(t, err)
	assert.Equal(t, map[int]string{1: "a", 2: "B"}, read(tx, []int32{1, 2}), "an Exec drops what was read ahead")
	require.NoError(t, tx.Rollback())

	tx = begin()
	assert.Equal(t, map[int]string{2: "b"}, read(tx, []int32{2}), "other arguments are a read of their own")
	assert.Equal(t, map[int]string{1: "a", 2: "b"}, read(tx, []int32{1, 2}))
	require.NoError(t, tx.Rollback())

	tx = begin()
	var count int
	require.NoError(t, tx.QueryRowContext(ctx, `SELECT count(*) FROM pipedb_items`).Scan(&count))
	assert.Equal(t, 2, count)
	assert.Equal(t, map[int]string{1: "a", 2: "b"}, read(tx, []int32{1, 2}), "read again after another query")
	require.NoError(t, tx.Commit())
}

// TestAReadSentAheadRunsAfterTheLockIsHeld: sent with a lock another
// transaction holds, the read sees that transaction's commit, as a read
// made after the lock's answer would: PostgreSQL runs it after the lock,
// with a snapshot of its own.
func TestAReadSentAheadRunsAfterTheLockIsHeld(t *testing.T) {
	piped, plain := pools(t, newDSN(t))
	_, err := plain.Exec(`DELETE FROM pipedb_items; INSERT INTO pipedb_items VALUES (1, 'a'), (2, 'b')`)
	require.NoError(t, err)
	ctx := context.Background()
	holder, err := plain.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = holder.ExecContext(ctx, lockItem, 1)
	require.NoError(t, err)
	_, err = holder.ExecContext(ctx, `UPDATE pipedb_items SET v = 'B' WHERE id = 2`)
	require.NoError(t, err)

	got := make(chan map[int]string, 1)
	go func() {
		tx, err := piped.BeginTx(ctx, nil)
		if err != nil {
			got <- nil
			return
		}
		defer func() { _ = tx.Rollback() }()
		var v string
		if err := tx.QueryRowContext(pipedb.ReadAhead(ctx, readItems, []int32{1, 2}), lockItem, 1).Scan(&v); err != nil {
			got <- nil
			return
		}
		rows, err := tx.QueryContext(ctx, readItems, []int32{1, 2})
		if err != nil {
			got <- nil
			return
		}
		out, err := scanPairs(rows)
		if err != nil {
			out = nil
		}
		got <- out
	}()
	// The write waits on the lock; then the holder commits its change.
	require.Eventually(t, func() bool {
		var waiting int
		require.NoError(t, plain.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query = $1`, lockItem).Scan(&waiting))
		return waiting == 1
	}, 10*time.Second, 10*time.Millisecond)
	require.NoError(t, holder.Commit())
	assert.Equal(t, map[int]string{1: "a", 2: "B"}, <-got, "the read ran after the lock was held, and saw the holder's commit")
}

// TestAReadSentAheadThatFailsAnswersItsQuery: the lock succeeds, the
// read's error is its Query's answer, and nothing the transaction did
// commits; a failed lock keeps nothing read ahead.
func TestAReadSentAheadThatFailsAnswersItsQuery(t *testing.T) {
	piped, plain := pools(t, newDSN(t))
	_, err := plain.Exec(`DELETE FROM pipedb_items; INSERT INTO pipedb_items VALUES (1, 'a')`)
	require.NoError(t, err)
	ctx := context.Background()
	const failing = `SELECT id, v FROM pipedb_items WHERE id = 1 / ($1::int - 1)`

	tx, err := piped.BeginTx(ctx, nil)
	require.NoError(t, err)
	var v string
	require.NoError(t, tx.QueryRowContext(pipedb.ReadAhead(ctx, failing, int32(1)), lockItem, 1).Scan(&v))
	_, err = tx.QueryContext(ctx, failing, int32(1))
	require.ErrorContains(t, err, "division by zero")
	_, err = tx.ExecContext(ctx, `INSERT INTO pipedb_items VALUES (5, 'e')`)
	require.Error(t, err, "the transaction failed with the read")
	require.Error(t, tx.Commit())
	assert.Equal(t, []int{1}, items(t, plain))

	tx, err = piped.BeginTx(ctx, nil)
	require.NoError(t, err)
	err = tx.QueryRowContext(pipedb.ReadAhead(ctx, readItems, []int32{1}), `SELECT v FROM pipedb_items WHERE id = 1 / 0 FOR UPDATE`).Scan(&v)
	require.ErrorContains(t, err, "division by zero")
	require.NoError(t, tx.Rollback())
	tx, err = piped.BeginTx(ctx, nil)
	require.NoError(t, err)
	rows, err := tx.QueryContext(ctx, readItems, []int32{1})
	require.NoError(t, err, "a new transaction on the connection reads afresh")
	assert.Equal(t, map[int]string{1: "a"}, pairs(t, rows))
	require.NoError(t, tx.Commit())
}
