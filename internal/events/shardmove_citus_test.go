//go:build citus

package events_test

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/events"
	"sessiongraph/internal/store"
	"sessiongraph/internal/testdb"
	"sessiongraph/migrations"
)

// On Citus (make test-citus builds this file), a session's shard moves to
// the other worker while a writer writes to the session without pause and
// a subscriber of the session follows it live: every write succeeds (they
// wait while the move blocks writes), and the subscriber receives every
// event once, in order, across the move.
func TestASessionsShardMovesUnderItsWriterAndSubscriber(t *testing.T) {
	require.True(t, testdb.Citus(), "this file is built for make test-citus only")
	dsn := testdb.New(t, migrations.Apply, migrations.Fingerprint())
	ctx := context.Background()
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	holds, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { holds.Close() })
	hub, st, s, _ := hubOn(t, dsn, store.HoldHorizon(store.HorizonHold(holds)))
	<-hub.Ready()
	live := hub.Subscribe(t.Context(), events.Filter{SessionID: &s.ID}, events.AfterSequence(1))

	var shard int64
	var from, to string
	var fromPort, toPort int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT p.shardid, p.nodename, p.nodeport
		FROM pg_dist_shard_placement p
		WHERE p.shardid = get_shard_id_for_distribution_column('sessions', $1::uuid)`, s.ID).Scan(&shard, &from, &fromPort))
	require.NoError(t, db.QueryRowContext(ctx, `SELECT nodename, nodeport FROM pg_dist_node
		WHERE groupid <> 0 AND NOT (nodename = $1 AND nodeport = $2) ORDER BY nodeid LIMIT 1`, from, fromPort).Scan(&to, &toPort))

	var written atomic.Int64
	stop := make(chan struct{})
	wrote := make(chan error, 1)
	go func() {
		for {
			select {
			case <-stop:
				wrote <- nil
				return
			default:
			}
			w, err := st.Begin(ctx, s.ID)
			if err == nil {
				_, err = w.Commit(ctx, store.Record(store.Event{Kind: "test.tick"}))
			}
			if err != nil {
				wrote <- err
				return
			}
			written.Add(1)
		}
	}()
	got := collect(t, live, 20, 30*time.Second) // the writer is under way
	_, err = db.ExecContext(ctx, `SELECT citus_move_shard_placement($1, $2, $3, $4, $5, shard_transfer_mode => 'block_writes')`,
		shard, from, fromPort, to, toPort)
	require.NoError(t, err)
	var now string
	require.NoError(t, db.QueryRowContext(ctx, `SELECT nodename || ':' || nodeport FROM pg_dist_shard_placement WHERE shardid = $1`, shard).Scan(&now))
	require.Equal(t, to+":"+itoa(toPort), now, "the session's shard is on the other worker")
	// Twenty more events than were written before the move ended: the
	// writer goes on, on the shard's new worker.
	got = append(got, collect(t, live, int(written.Load())+20-len(got), 30*time.Second)...)
	close(stop)
	require.NoError(t, <-wrote, "every write succeeded across the move")
	total := int(written.Load())
	got = append(got, collect(t, live, total-len(got), 30*time.Second)...)
	for i, ev := range got {
		assert.Equal(t, int64(i+2), ev.Sequence, "the subscriber receives each event once, in order")
	}
	t.Logf("moved shard %d from %s:%d to %s:%d under %d writes", shard, from, fromPort, to, toPort, total)
}

func itoa(n int) string { return fmt.Sprint(n) }
