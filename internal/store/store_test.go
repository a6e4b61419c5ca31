package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/google/uuid"
	_ "github.com/jackc/pgx/v5/stdlib" // the pool's driver, as the server uses
	"github.com/lib/pq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent"
	"sessiongraph/ent/event"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/store"
	"sessiongraph/internal/testdb"
	"sessiongraph/migrations"
)

func newStore(t *testing.T, opts ...store.Option) (*store.Store, *ent.Client, string) {
	t.Helper()
	dsn := testdb.New(t, migrations.Apply, migrations.Fingerprint())
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	client := ent.NewClient(ent.Driver(entsql.OpenDB(dialect.Postgres, db)))
	t.Cleanup(func() { client.Close() })
	return store.New(client, db, opts...), client, dsn
}

func openOne(t *testing.T, st *store.Store, key string) *ent.Session {
	t.Helper()
	o, err := st.Open(context.Background(), "acme", key, func(c *ent.SessionCreate) {
		c.SetDomain("kitchen").SetTTLSeconds(3600)
	})
	require.NoError(t, err)
	require.True(t, o.Created)
	return o.Session
}

// tick writes one event of kind to a session, changing nothing else.
func tick(ctx context.Context, st *store.Store, id uuid.UUID, kind string) error {
	w, err := st.Begin(ctx, id)
	if err != nil {
		return err
	}
	defer w.Rollback()
	_, err = w.Commit(ctx, store.Record(store.Event{Kind: kind}))
	return err
}

func TestWriteAppendsOneEventAndRingsTheDoorbellAfterCommit(t *testing.T) {
	// Nothing NOTIFYs inside the writing transaction: the doorbell rings
	// after the commit, from the store's RingOnCommit.
	var rings atomic.Int32
	st, client, dsn := newStore(t, store.RingOnCommit(func(sessions []uuid.UUID) {
		assert.Len(t, sessions, 1, "the session it wrote")
		rings.Add(1)
	}))
	ctx := context.Background()
	listener := pq.NewListener(dsn, 10*time.Millisecond, time.Second, nil)
	require.NoError(t, listener.Listen("sessiongraph_events"))
	t.Cleanup(func() { listener.Close() })

	s := openOne(t, st, "k")
	w, err := st.Begin(ctx, s.ID)
	require.NoError(t, err)
	w.Update().SetHistorySummary("summary")
	got, err := w.Commit(ctx, store.Mutation{Events: []store.Event{{Kind: "test.changed", Payload: map[string]any{"n": 1}}}, ReadBack: true})
	require.NoError(t, err)
	assert.Equal(t, "summary", got.HistorySummary)
	assert.True(t, got.LastActiveAt.After(s.LastActiveAt))
	assert.Equal(t, time.Hour, got.ExpiresAt.Sub(got.LastActiveAt))
	assert.Equal(t, int64(2), got.EventSequence, "the session row holds its newest event's number")

	evs := client.Event.Query().Order(event.BySequence()).AllX(ctx)
	require.Len(t, evs, 2)
	assert.Equal(t, []string{"session.opened", "test.changed"}, []string{evs[0].Kind, evs[1].Kind})
	assert.Equal(t, []int64{1, 2}, []int64{evs[0].Sequence, evs[1].Sequence}, "numbered within the session")
	assert.Positive(t, evs[0].Xid, "the writing transaction's id")
	// Not below the previous event's: equal when the later transaction's
	// id is the first the earlier statement's snapshot had not seen
	// complete, which other transactions on the server (a parallel test
	// binary's) make possible; the feed orders (xid, session, sequence).
	assert.GreaterOrEqual(t, evs[1].Xid, evs[0].Xid)
	assert.Equal(t, "acme", evs[1].Tenant)
	assert.Equal(t, map[string]any{"n": float64(1)}, evs[1].Payload)
	assert.Equal(t, int32(2), rings.Load(), "one ring per committed write")

	// A marker sent after the writes committed: notifications arrive in
	// commit order, so one a write had sent would arrive before it.
	db, err := sql.Open("postgres", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	_, err = db.ExecContext(ctx, `SELECT pg_notify('sessiongraph_events', 'marker')`)
	require.NoError(t, err)
	select {
	case n := <-listener.Notify:
		require.NotNil(t, n)
		assert.Equal(t, "marker", n.Extra, "a write sent a NOTIFY itself")
	case <-time.After(30 * time.Second):
		t.Fatal("the marker never arrived")
	}
}

func TestFailedWriteChangesNothing(t *testing.T) {
	st, client, _ := newStore(t)
	ctx := context.Background()
	s := openOne(t, st, "k")

	// A write that ends in Rollback after its statements, as an engine
	// operation whose rules refuse the change does.
	w, err := st.Begin(ctx, s.ID)
	require.NoError(t, err)
	w.Update().SetHistorySummary("half-done")
	_, err = w.Tx.Turn.Create().SetSessionID(s.ID).SetNumber(1).Save(ctx)
	require.NoError(t, err)
	w.Rollback()
	w.Rollback() // a second Rollback, as a deferred one after an early return, does nothing

	w, err = st.Begin(ctx, s.ID)
	require.NoError(t, err)
	w.Update().SetHistorySummary("half-done")
	_, err = w.Tx.Turn.Create().SetSessionID(s.ID).SetNumber(1).Save(ctx)
	require.NoError(t, err)
	_, err = w.Commit(ctx, store.Mutation{}) // names no event
	require.Error(t, err)
	_, err = w.Commit(ctx, store.Record(store.Event{Kind: "test.late"}))
	require.Error(t, err, "a write that failed to commit has ended")

	after := client.Session.GetX(ctx, s.ID)
	assert.Equal(t, s.LastActiveAt, after.LastActiveAt, "a failed write is not activity")
	assert.Equal(t, int64(1), after.EventSequence, "and numbers no event")
	assert.Equal(t, "", after.HistorySummary)
	assert.Equal(t, 0, client.Turn.Query().CountX(ctx))
	assert.Equal(t, 1, client.Event.Query().CountX(ctx))

	_, err = st.Begin(ctx, uuid.New())
	assert.Equal(t, apperr.NotFound, apperr.CodeOf(err))
}

// TestSessionSequencesCommitInOrder runs writers on many sessions while a
// reader polls each session's "events after my cursor" the way a subscriber
// of that session does: it must never see sequence N+1 before N is
// visible, or it would skip N for good; and every session's numbers run
// 1, 2, 3, … without a gap.
func TestSessionSequencesCommitInOrder(t *testing.T) {
	st, client, _ := newStore(t)
	ctx := context.Background()
	const writers, writes = 8, 25
	sessions := make([]*ent.Session, writers)
	for i := range sessions {
		sessions[i] = openOne(t, st, fmt.Sprintf("k%d", i))
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	for i := range writers * 2 { // two writers per session
		wg.Go(func() {
			for range writes {
				assert.NoError(t, tick(ctx, st, sessions[i%writers].ID, "test.tick"))
			}
		})
	}
	go func() { wg.Wait(); close(done) }()

	cursors := make([]int64, writers)
	for finished := false; !finished; {
		select {
		case <-done:
			finished = true
		default:
		}
		for i, s := range sessions {
			evs := client.Event.Query().Where(event.SessionID(s.ID), event.SequenceGT(cursors[i])).Order(event.BySequence()).AllX(ctx)
			for _, e := range evs {
				require.Equal(t, cursors[i]+1, e.Sequence, "a reader of session %d saw a gap", i)
				cursors[i] = e.Sequence
			}
		}
	}
	for i, s := range sessions {
		assert.Equal(t, int64(1+2*writes), cursors[i])
		assert.Equal(t, int64(1+2*writes), client.Session.GetX(ctx, s.ID).EventSequence)
	}
}
