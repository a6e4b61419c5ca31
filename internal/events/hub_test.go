package events_test

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	_ "github.com/jackc/pgx/v5/stdlib" // the pool's driver, as the server uses
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent"
	"sessiongraph/internal/events"
	"sessiongraph/internal/store"
	"sessiongraph/internal/testdb"
	"sessiongraph/migrations"
)

func hubAndStore(t *testing.T) (*events.Hub, *store.Store, *ent.Session) {
	t.Helper()
	hub, st, s, _ := hubFixture(t)
	return hub, st, s
}

// hubFixture is a running hub and its doorbell, a store that rings it, an
// open session, and the database's DSN.
func hubFixture(t *testing.T) (*events.Hub, *store.Store, *ent.Session, string) {
	t.Helper()
	return hubOn(t, testdb.New(t, migrations.Apply, migrations.Fingerprint()))
}

// hubOn is hubFixture on the database at dsn, its store made with opts
// besides the doorbell.
func hubOn(t *testing.T, dsn string, opts ...store.Option) (*events.Hub, *store.Store, *ent.Session, string) {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	client := ent.NewClient(ent.Driver(entsql.OpenDB(dialect.Postgres, db)))
	t.Cleanup(func() { client.Close() })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	hub := events.NewHub(db, dsn, 0, log)
	bell := events.NewDoorbell(db, hub, log)
	st := store.New(client, db, append(opts, store.RingOnCommit(bell.Ring))...)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	go func() { defer func() { done <- struct{}{} }(); _ = hub.Run(ctx) }()
	go func() { defer func() { done <- struct{}{} }(); bell.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done; <-done })
	opened, err := st.Open(context.Background(), "acme", "hub", func(c *ent.SessionCreate) { c.SetDomain("kitchen").SetTTLSeconds(3600) })
	require.NoError(t, err)
	return hub, st, opened.Session, dsn
}

func tick(t *testing.T, st *store.Store, s *ent.Session) {
	t.Helper()
	w, err := st.Begin(context.Background(), s.ID)
	require.NoError(t, err)
	_, err = w.Commit(context.Background(), store.Record(store.Event{Kind: "test.tick"}))
	require.NoError(t, err)
}

// A subscriber that stops reading is cut off with ErrTooSlow once it is
// BufferSize events behind: it is told, and it loses nothing it was given.
// It runs over TCP and over a Unix socket: the test once waited a fixed
// 100 ms for the subscriber's replay to end, which over TCP on a loaded
// machine (new connections negotiate TLS and a password there) it had not,
// and then it waited for ever (see TestSubscriberStillReplayingIsToldToo).
func TestSlowSubscriberIsToldAndDisconnected(t *testing.T) {
	for _, transport := range testdb.Transports {
		t.Run(string(transport), func(t *testing.T) {
			dsn := testdb.NewProxy(t, testdb.New(t, migrations.Apply, migrations.Fingerprint()), transport).DSN
			hub, st, s, _ := hubOn(t, dsn)
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			stream := hub.Subscribe(ctx, events.Filter{SessionID: &s.ID}, events.FromNow)
			waitUntil(t, ctx, "the subscriber has replayed and takes events live", func() bool { return hub.Live() == 1 })

			written := writeUntilDropped(t, ctx, hub, st, s)
			got := readAll(t, ctx, stream)
			assert.ErrorIs(t, stream.Err(), events.ErrTooSlow)
			assert.Len(t, got, events.BufferSize, "everything up to the full buffer (of %d written)", written)
			assertConsecutive(t, got)
		})
	}
}

// A subscriber still replaying the table when it stops reading is paced by
// its reader until its replay buffer is full too: then it is told as well,
// never left waiting with its live events held back.
func TestSubscriberStillReplayingIsToldToo(t *testing.T) {
	hub, st, s := hubAndStore(t)
	for range events.BufferSize + 10 { // a history longer than the stream's buffer
		tick(t, st, s)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	stream := hub.Subscribe(ctx, events.Filter{SessionID: &s.ID}, events.AfterSequence(0))
	waitUntil(t, ctx, "the replay filled the stream's buffer", func() bool { return len(stream.C) == events.BufferSize })
	require.Zero(t, hub.Live(), "the subscriber is still replaying: the reader paces it")

	written := writeUntilDropped(t, ctx, hub, st, s)
	got := readAll(t, ctx, stream)
	assert.ErrorIs(t, stream.Err(), events.ErrTooSlow)
	history := 1 + events.BufferSize + 10 // session.opened and the ticks
	assert.Equal(t, int64(1), got[0].Sequence, "the replay from the first event")
	assert.GreaterOrEqual(t, len(got), history, "the whole history it was given")
	assert.LessOrEqual(t, len(got), history+events.BufferSize, "at most a replay buffer of live events past it (of %d written)", written)
	assertConsecutive(t, got)
}

// writeUntilDropped writes events, never reading, until the hub lets its
// only subscriber go, and returns how many it wrote.
func writeUntilDropped(t *testing.T, ctx context.Context, hub *events.Hub, st *store.Store, s *ent.Session) int {
	t.Helper()
	written := 0
	for hub.Subscribers() > 0 {
		// A runaway guard, not the rule: the hub drops the subscriber once
		// its poll has read a buffer past what the stream holds, and the
		// writer may run ahead of the polls (on Citus each poll asks every
		// shard); the caller checks what the subscriber was given.
		require.Less(t, written, 32*events.BufferSize, "a subscriber that reads nothing is still connected after %d events", written)
		require.NoError(t, ctx.Err(), "a subscriber that reads nothing is still connected after %d events", written)
		tick(t, st, s)
		written++
	}
	return written
}

// readAll reads the stream to its end, failing the test at ctx's deadline.
func readAll(t *testing.T, ctx context.Context, stream *events.Stream) []*events.Event {
	t.Helper()
	var got []*events.Event
	for {
		select {
		case ev, ok := <-stream.C:
			if !ok {
				return got
			}
			got = append(got, ev)
		case <-ctx.Done():
			t.Fatalf("the stream did not end: %d events read", len(got))
		}
	}
}

// receive is the stream's next event, failing the test at ctx's deadline.
func receive(t *testing.T, ctx context.Context, stream *events.Stream) *events.Event {
	t.Helper()
	select {
	case ev, ok := <-stream.C:
		require.True(t, ok, "the stream ended: %v", stream.Err())
		return ev
	case <-ctx.Done():
		t.Fatal("no event arrived")
		return nil
	}
}

func assertConsecutive(t *testing.T, got []*events.Event) {
	t.Helper()
	for i := 1; i < len(got); i++ {
		if !assert.Equal(t, got[i-1].Sequence+1, got[i].Sequence, "in order, none skipped") {
			return
		}
	}
}

// waitUntil polls cond until it holds, failing the test with what it waited
// for at ctx's deadline.
func waitUntil(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waited in vain until %s", what)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// A subscriber that leaves is unregistered and costs nothing afterwards.
func TestSubscriberThatLeavesIsUnregistered(t *testing.T) {
	hub, st, s := hubAndStore(t)
	deadline, stop := context.WithTimeout(t.Context(), time.Minute)
	defer stop()
	ctx, cancel := context.WithCancel(t.Context())
	stream := hub.Subscribe(ctx, events.Filter{SessionID: &s.ID}, events.AfterSequence(0))
	assert.Equal(t, "session.opened", receive(t, deadline, stream).Kind, "replayed from the table")
	tick(t, st, s)
	assert.Equal(t, "test.tick", receive(t, deadline, stream).Kind, "then live")
	cancel()
	assert.Empty(t, readAll(t, deadline, stream))
	assert.NoError(t, stream.Err())
	assert.Zero(t, hub.Subscribers())
}
