package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/google/uuid"
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

func newStore(t *testing.T) (*store.Store, *ent.Client, string) {
	t.Helper()
	dsn := testdb.New(t, migrations.Apply, migrations.Fingerprint())
	db, err := sql.Open("postgres", dsn)
	require.NoError(t, err)
	client := ent.NewClient(ent.Driver(entsql.OpenDB(dialect.Postgres, db)))
	t.Cleanup(func() { client.Close() })
	return store.New(client, nil), client, dsn
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

func TestWriteAppendsOneEventAndRingsTheDoorbell(t *testing.T) {
	st, client, dsn := newStore(t)
	ctx := context.Background()

	listener := pq.NewListener(dsn, 10*time.Millisecond, time.Second, nil)
	require.NoError(t, listener.Listen(store.NotifyChannel))
	t.Cleanup(func() { listener.Close() })

	s := openOne(t, st, "k")
	got, err := st.Update(ctx, s.ID, func(ctx context.Context, w *store.Work) (store.Event, error) {
		w.Update().SetHistorySummary("summary")
		return store.Event{Kind: "test.changed", Payload: map[string]any{"n": 1}}, nil
	})
	require.NoError(t, err)
	assert.Equal(t, "summary", got.HistorySummary)
	assert.True(t, got.LastActiveAt.After(s.LastActiveAt))
	assert.Equal(t, time.Hour, got.ExpiresAt.Sub(got.LastActiveAt))

	evs := client.Event.Query().Order(event.BySequence()).AllX(ctx)
	require.Len(t, evs, 2)
	assert.Equal(t, []string{"session.opened", "test.changed"}, []string{evs[0].Kind, evs[1].Kind})
	assert.Equal(t, []int64{1, 2}, []int64{evs[0].Sequence, evs[1].Sequence}, "numbered at commit, densely")
	assert.Equal(t, "acme", evs[1].Tenant)
	assert.Equal(t, map[string]any{"n": float64(1)}, evs[1].Payload)

	for range 2 { // one doorbell per committed write
		select {
		case n := <-listener.Notify:
			assert.Empty(t, n.Extra, "the doorbell carries nothing: listeners read the table")
		case <-time.After(5 * time.Second):
			t.Fatal("no notification")
		}
	}
}

func TestFailedWriteChangesNothing(t *testing.T) {
	st, client, _ := newStore(t)
	ctx := context.Background()
	s := openOne(t, st, "k")

	boom := errors.New("boom")
	err := st.Write(ctx, s.ID, func(ctx context.Context, w *store.Work) (store.Event, error) {
		w.Update().SetHistorySummary("half-done")
		_, err := w.Tx.Turn.Create().SetSessionID(s.ID).SetNumber(1).Save(ctx)
		require.NoError(t, err)
		return store.Event{}, boom
	})
	require.ErrorIs(t, err, boom)

	err = st.Write(ctx, s.ID, func(context.Context, *store.Work) (store.Event, error) {
		return store.Event{}, nil // names no event
	})
	require.Error(t, err)

	after := client.Session.GetX(ctx, s.ID)
	assert.Equal(t, s.LastActiveAt, after.LastActiveAt, "a failed write is not activity")
	assert.Equal(t, "", after.HistorySummary)
	assert.Equal(t, 0, client.Turn.Query().CountX(ctx))
	assert.Equal(t, 1, client.Event.Query().CountX(ctx))

	err = st.Write(ctx, uuid.New(), func(context.Context, *store.Work) (store.Event, error) {
		t.Fatal("the change must not run for a missing session")
		return store.Event{}, nil
	})
	assert.Equal(t, apperr.NotFound, apperr.CodeOf(err))
}

// TestSequencesCommitInOrder runs writers on many sessions while a reader
// polls "events after my cursor" the way a subscriber does: it must never see
// sequence N+1 before N is visible, or it would skip N for good.
func TestSequencesCommitInOrder(t *testing.T) {
	st, client, _ := newStore(t)
	ctx := context.Background()
	const writers, writes = 8, 25
	sessions := make([]*ent.Session, writers)
	for i := range sessions {
		sessions[i] = openOne(t, st, fmt.Sprintf("k%d", i))
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			for range writes {
				err := st.Write(ctx, sessions[i].ID, func(ctx context.Context, w *store.Work) (store.Event, error) {
					return store.Event{Kind: "test.tick"}, nil
				})
				assert.NoError(t, err)
			}
		})
	}
	go func() { wg.Wait(); close(done) }()

	var cursor int64
	for finished := false; !finished; {
		select {
		case <-done:
			finished = true
		default:
		}
		evs := client.Event.Query().Where(event.SequenceGT(cursor)).Order(event.BySequence()).AllX(ctx)
		for _, e := range evs {
			require.Equal(t, cursor+1, e.Sequence, "a reader saw a gap")
			cursor = e.Sequence
		}
	}
	assert.Equal(t, int64(writers+writers*writes), cursor)
}
