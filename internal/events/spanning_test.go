package events_test

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent"
	"sessiongraph/ent/session"
	"sessiongraph/internal/events"
	"sessiongraph/internal/store"
	"sessiongraph/internal/testdb"
	"sessiongraph/migrations"
)

// commitPreparedDelay is how late the second phase of a two-phase commit
// reaches the gated worker: a fault the test injects, long enough for
// several other commits and feed reads to fall between a coordinator's
// commit and that worker's.
const commitPreparedDelay = 300 * time.Millisecond

// Writes that span shards, many at once, while single-session writes go on
// and the feed of every session is followed: the follower receives every
// event in the table once, each session's in its order, in increasing
// positions. On Citus (make test-citus) each of these writes is a two-phase
// commit over two or three shards on both workers, whose workers commit
// after the coordinator; a gate in front of one worker holds back each
// COMMIT PREPARED for commitPreparedDelay, so that other writers' commits,
// their doorbells and the feed's reads fall into the window. The store
// holds the feed's horizon meanwhile, as the server does there. Without
// the hold, this test fails on the cluster: the feed passes the delayed
// events while they are invisible and never delivers them. On one
// PostgreSQL it is the same feed, with no second phase.
func TestTheFeedSkipsNothingUnderWritesThatSpanShards(t *testing.T) {
	dsn := testdb.New(t, migrations.Apply, migrations.Fingerprint())
	ctx := context.Background()
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	onCitus, err := store.OnCitus(ctx, db)
	require.NoError(t, err)
	require.Equal(t, testdb.Citus(), onCitus, "the database is a Citus coordinator exactly under make test-citus")
	var delayed atomic.Int64
	var held []store.Option
	if onCitus {
		holds, err := sql.Open("pgx", dsn)
		require.NoError(t, err)
		t.Cleanup(func() { holds.Close() })
		held = append(held, store.HoldHorizon(store.HorizonHold(holds)))
		// Widen the window: the second phase of every two-phase commit
		// reaches one worker late, long after the coordinator's commit,
		// while the other writers' commits ring the feed's hub.
		var host string
		var port int
		require.NoError(t, db.QueryRowContext(ctx, `SELECT nodename, nodeport FROM pg_dist_node
			WHERE groupid <> 0 ORDER BY nodeid DESC LIMIT 1`).Scan(&host, &port))
		testdb.GateWorker(t, dsn, host, port, func(string) {
			delayed.Add(1)
			time.Sleep(commitPreparedDelay)
		})
	}
	hub, st, first, _ := hubOn(t, dsn, held...)
	<-hub.Ready()

	const writers, rounds, group = 6, 8, 3
	// Each round of a writer: open group new sessions (each a transaction
	// over its key's shard and its own), tick each once, expire them
	// together (one transaction over their shards), and tick first.
	// The follower reads until the last event, a tick of first written
	// after every other write has returned: whatever the feed skipped by
	// then, it skipped for good.
	total := 1 + writers*rounds*(group*3+1) + 1
	last := int64(1 + writers*rounds + 1)
	all := followUntil(t, hub, func(got []*events.Event) bool {
		return len(got) > 0 && got[len(got)-1].SessionID == first.ID && got[len(got)-1].Sequence == last
	}, 3*time.Minute)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for r := range rounds {
				ids := make([]uuid.UUID, group)
				for i := range ids {
					o, err := st.Open(ctx, "acme", fmt.Sprintf("span-%d-%d-%d", w, r, i),
						func(c *ent.SessionCreate) { c.SetDomain("kitchen").SetTTLSeconds(3600) })
					if !assert.NoError(t, err) {
						return
					}
					ids[i] = o.Session.ID
					tick(t, st, o.Session)
				}
				expired, err := st.ExpireWhere(ctx, "test", session.IDIn(ids...))
				if !assert.NoError(t, err) || !assert.Len(t, expired, group) {
					return
				}
				tick(t, st, first)
			}
		})
	}
	wg.Wait()
	tick(t, st, first)
	var stored int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM events`).Scan(&stored))
	require.Equal(t, total, stored, "every write committed its events")

	got := all()
	next := map[uuid.UUID]int64{}
	seen := map[uuid.UUID]bool{}
	for i, ev := range got {
		require.False(t, seen[ev.ID], "event %s delivered twice", ev.ID)
		seen[ev.ID] = true
		require.Equal(t, next[ev.SessionID]+1, ev.Sequence, "session %s: an event skipped or out of order", ev.SessionID)
		next[ev.SessionID] = ev.Sequence
		if i > 0 {
			require.True(t, ev.Position().After(got[i-1].Position()), "the feed's positions increase")
		}
	}
	assert.Len(t, next, 1+writers*rounds*group)
	if onCitus {
		t.Logf("%d commits' second phase delayed by %v on one worker", delayed.Load(), commitPreparedDelay)
	}
	assert.Equal(t, last, next[first.ID])
	assert.Len(t, got, total, "the follower received every event")
}
