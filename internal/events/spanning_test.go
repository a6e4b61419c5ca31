package events_test

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent"
	"sessiongraph/ent/session"
	"sessiongraph/internal/store"
	"sessiongraph/internal/testdb"
	"sessiongraph/migrations"
)

// Writes that span shards, many at once, while single-session writes go on
// and the feed of every session is followed: the follower receives every
// event in the table once, each session's in its order, in increasing
// positions. On Citus (make test-citus) each of these writes is a two-phase
// commit over two or three shards on both workers, whose workers commit
// after the coordinator: the store holds the feed's horizon meanwhile, as
// the server does there, and the follower reads the feed all along, so a
// read that fell between a coordinator's commit and its workers' would
// have skipped an event. On one PostgreSQL it is the same feed, with no
// second phase.
func TestTheFeedSkipsNothingUnderWritesThatSpanShards(t *testing.T) {
	dsn := testdb.New(t, migrations.Apply, migrations.Fingerprint())
	ctx := context.Background()
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	onCitus, err := store.OnCitus(ctx, db)
	require.NoError(t, err)
	require.Equal(t, testdb.Citus(), onCitus, "the database is a Citus coordinator exactly under make test-citus")
	var held []store.Option
	if onCitus {
		holds, err := sql.Open("pgx", dsn)
		require.NoError(t, err)
		t.Cleanup(func() { holds.Close() })
		held = append(held, store.HoldHorizon(store.HorizonHold(holds)))
	}
	hub, st, first, _ := hubOn(t, dsn, held...)
	<-hub.Ready()

	const writers, rounds, group = 6, 8, 3
	// Each round of a writer: open group new sessions (each a transaction
	// over its key's shard and its own), tick each once, expire them
	// together (one transaction over their shards), and tick first.
	total := 1 + writers*rounds*(group*3+1)
	all := follow(t, hub, total, 3*time.Minute)
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
	assert.Equal(t, int64(1+writers*rounds), next[first.ID])
}
