package events_test

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
	_ "github.com/jackc/pgx/v5/stdlib" // the pool's driver, as the server uses
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent"
	"sessiongraph/ent/session"
	"sessiongraph/internal/events"
	"sessiongraph/internal/store"
)

// collect reads n events from a stream, failing after timeout.
func collect(t *testing.T, st *events.Stream, n int, timeout time.Duration) []*events.Event {
	t.Helper()
	var out []*events.Event
	deadline := time.After(timeout)
	for len(out) < n {
		select {
		case ev, ok := <-st.C:
			require.True(t, ok, "the stream ended after %d of %d events: %v", len(out), n, st.Err())
			out = append(out, ev)
		case <-deadline:
			t.Fatalf("%d of %d events after %v", len(out), n, timeout)
		}
	}
	return out
}

// follow reads n events of the feed of every session in the background,
// from the start, as a client would: when the hub cuts it off for falling
// behind (the feed releases what an older transaction held back at once),
// it resumes after the cursor of the last event it received. wait returns
// the events.
func follow(t *testing.T, hub *events.Hub, n int, timeout time.Duration) (wait func() []*events.Event) {
	return followUntil(t, hub, func(out []*events.Event) bool { return len(out) == n }, timeout)
}

// followUntil is follow until enough(the events so far) holds.
func followUntil(t *testing.T, hub *events.Hub, enough func([]*events.Event) bool, timeout time.Duration) (wait func() []*events.Event) {
	done := make(chan []*events.Event, 1)
	fail := make(chan string, 1)
	go func() {
		var out []*events.Event
		deadline := time.After(timeout)
		st := hub.Subscribe(t.Context(), events.Filter{}, events.AfterPosition(events.Position{}))
		for !enough(out) {
			select {
			case ev, ok := <-st.C:
				if !ok {
					if !errors.Is(st.Err(), events.ErrTooSlow) {
						fail <- fmt.Sprintf("the stream ended after %d events: %v", len(out), st.Err())
						return
					}
					var last events.Position
					if len(out) > 0 {
						last = out[len(out)-1].Position()
					}
					st = hub.Subscribe(t.Context(), events.Filter{}, events.AfterPosition(last))
					continue
				}
				out = append(out, ev)
			case <-deadline:
				fail <- fmt.Sprintf("%d events after %v, and not yet the last", len(out), timeout)
				return
			}
		}
		done <- out
	}()
	return func() []*events.Event {
		t.Helper()
		select {
		case out := <-done:
			return out
		case msg := <-fail:
			t.Fatal(msg)
			return nil
		}
	}
}

// Writers on many sessions, and expiries that lock several sessions in one
// transaction: a subscriber of every session receives every event once,
// each session's in its order, and one that resumes from a cursor taken in
// the middle receives exactly the rest.
func TestTheFeedOfEverySessionDeliversEachEventOnceInSessionOrder(t *testing.T) {
	hub, st, first := hubAndStore(t)
	ctx := context.Background()
	<-hub.Ready()
	const sessions, writes = 6, 30
	total := sessions + sessions*2*writes + 3
	all := follow(t, hub, total, 30*time.Second)
	ids := []uuid.UUID{first.ID}
	for i := 1; i < sessions; i++ {
		o, err := st.Open(ctx, "acme", fmt.Sprintf("feed-%d", i), func(c *ent.SessionCreate) { c.SetDomain("kitchen").SetTTLSeconds(3600) })
		require.NoError(t, err)
		ids = append(ids, o.Session.ID)
	}
	var wg sync.WaitGroup
	for i := range sessions * 2 {
		wg.Go(func() {
			for range writes {
				tick(t, st, &ent.Session{ID: ids[i%sessions]})
			}
		})
	}
	wg.Wait()
	// One transaction that locks three sessions and writes an event to each.
	expired, err := st.ExpireWhere(ctx, "test", session.IDIn(ids[3:]...))
	require.NoError(t, err)
	require.Len(t, expired, 3)

	got := all()
	next := map[uuid.UUID]int64{}
	seen := map[uuid.UUID]bool{}
	for i, ev := range got {
		require.False(t, seen[ev.ID], "event %s delivered twice", ev.ID)
		seen[ev.ID] = true
		require.Equal(t, next[ev.SessionID]+1, ev.Sequence, "session %s out of order", ev.SessionID)
		next[ev.SessionID] = ev.Sequence
		if i > 0 {
			require.True(t, ev.Position().After(got[i-1].Position()), "the feed's positions increase")
		}
	}
	for _, id := range ids[3:] {
		assert.Equal(t, int64(1+2*writes+1), next[id])
	}

	// A subscriber that resumes after the 100th event's cursor gets the rest.
	cursor, err := events.ParsePosition(got[99].Cursor())
	require.NoError(t, err)
	rest := hub.Subscribe(t.Context(), events.Filter{}, events.AfterPosition(cursor))
	for i, ev := range collect(t, rest, total-100, 30*time.Second) {
		assert.Equal(t, got[100+i].ID, ev.ID)
	}
}

// A writing transaction left open (here one that writes no event) holds
// the snapshot horizon back: an event committed meanwhile waits in the feed
// of every session, and is delivered there once the transaction ends,
// without a doorbell of its own: late, never lost. The session's own
// subscribers do not wait: a session's events are final once visible, and
// the doorbell names the session.
func TestAnOpenTransactionDelaysTheFeedAndLosesNothing(t *testing.T) {
	hub, st, s, dsn := hubFixture(t)
	ctx := context.Background()
	<-hub.Ready()
	live := hub.Subscribe(t.Context(), events.Filter{SessionID: &s.ID}, events.AfterSequence(1))
	all := hub.Subscribe(t.Context(), events.Filter{Kinds: map[string]bool{"test.tick": true}}, events.FromNow)
	deadline, stop := context.WithTimeout(t.Context(), time.Minute)
	defer stop()
	waitUntil(t, deadline, "both subscribers are live", func() bool { return hub.Live() == 2 })

	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	held, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer held.Rollback()
	var xid int64
	require.NoError(t, held.QueryRowContext(ctx, `SELECT pg_current_xact_id()::text::bigint`).Scan(&xid))

	tick(t, st, s)
	ev := collect(t, live, 1, 10*time.Second)[0]
	assert.Equal(t, int64(2), ev.Sequence, "the session's subscriber has it at once")
	assert.Greater(t, ev.Xid, xid)
	// Nothing marks the moment the hub has looked and held the event back,
	// so its absence is watched over several of the hub's looks (5 ms,
	// doubling to 250 ms, while the horizon is held).
	select {
	case ev := <-all.C:
		t.Fatalf("event %d delivered to the feed while an older transaction was open", ev.Sequence)
	case <-time.After(500 * time.Millisecond):
	}

	require.NoError(t, held.Commit())
	ev = collect(t, all, 1, 10*time.Second)[0]
	assert.Equal(t, s.ID, ev.SessionID)
	assert.Equal(t, int64(2), ev.Sequence)
}

// A subscriber that joins may read the table further than the hub has
// offered the session's other subscribers (here the writes ring no bell,
// so the hub learns of them only from its timer). The hub must go on
// offering from where they are, not from where the newcomer is: they would
// wait for events it never offered again.
func TestASubscriberWhoReadsAheadDoesNotStrandTheOthers(t *testing.T) {
	hub, _, s, dsn := hubFixture(t)
	<-hub.Ready()
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	client := ent.NewClient(ent.Driver(entsql.OpenDB(dialect.Postgres, db)))
	t.Cleanup(func() { client.Close() })
	silent := store.New(client, db) // rings no doorbell

	early := gather(t, hub.Subscribe(t.Context(), events.Filter{SessionID: &s.ID}, events.AfterSequence(0)), 6)
	deadline, stop := context.WithTimeout(t.Context(), time.Minute)
	defer stop()
	waitUntil(t, deadline, "the first subscriber is past its replay", func() bool { return hub.Live() == 1 })
	for range 5 {
		tick(t, silent, s)
	}
	late := gather(t, hub.Subscribe(t.Context(), events.Filter{SessionID: &s.ID}, events.AfterSequence(0)), 6)
	for i, evs := range [][]*events.Event{early(), late()} {
		for n, ev := range evs {
			assert.Equal(t, int64(n+1), ev.Sequence, "subscriber %d", i)
		}
	}
}

// gather reads n events from a stream in the background; wait returns
// them, or fails the test if the stream ends first or takes over 30 s.
func gather(t *testing.T, st *events.Stream, n int) (wait func() []*events.Event) {
	done := make(chan []*events.Event, 1)
	go func() {
		var out []*events.Event
		deadline := time.After(30 * time.Second)
		for len(out) < n {
			select {
			case ev, ok := <-st.C:
				if !ok {
					done <- out
					return
				}
				out = append(out, ev)
			case <-deadline:
				done <- out
				return
			}
		}
		done <- out
	}()
	return func() []*events.Event {
		t.Helper()
		out := <-done
		require.Len(t, out, n, "events before the stream ended or 30 s passed (%v)", st.Err())
		return out
	}
}
