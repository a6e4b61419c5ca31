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
	dsn := testdb.New(t, migrations.Apply, migrations.Fingerprint())
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	client := ent.NewClient(ent.Driver(entsql.OpenDB(dialect.Postgres, db)))
	t.Cleanup(func() { client.Close() })
	st := store.New(client, nil)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	hub := events.NewHub(db, dsn, log)
	bell := events.NewDoorbell(db, hub, log)
	st.OnCommit(bell.Ring)
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
	require.NoError(t, st.Write(context.Background(), s.ID, func(context.Context, *store.Work) (store.Event, error) {
		return store.Event{Kind: "test.tick"}, nil
	}))
}

// A subscriber that stops reading is cut off with ErrTooSlow once it is
// BufferSize events behind: it is told, and it loses nothing it was given.
func TestSlowSubscriberIsToldAndDisconnected(t *testing.T) {
	hub, st, s := hubAndStore(t)
	stream := hub.Subscribe(t.Context(), events.Filter{SessionID: &s.ID}, events.FromNow)
	for hub.Subscribers() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // past the replay: the hub now delivers directly
	for range events.BufferSize + 20 {
		tick(t, st, s)
	}
	var got []int64
	for ev := range stream.C { // read only now, after the writes
		got = append(got, ev.Sequence)
	}
	assert.ErrorIs(t, stream.Err(), events.ErrTooSlow)
	assert.Len(t, got, events.BufferSize, "everything up to the full buffer, in order")
	for i := 1; i < len(got); i++ {
		assert.Equal(t, got[i-1]+1, got[i])
	}
	assert.Zero(t, hub.Subscribers(), "the slow subscriber is gone")
}

// A subscriber that leaves is unregistered and costs nothing afterwards.
func TestSubscriberThatLeavesIsUnregistered(t *testing.T) {
	hub, st, s := hubAndStore(t)
	ctx, cancel := context.WithCancel(t.Context())
	stream := hub.Subscribe(ctx, events.Filter{SessionID: &s.ID}, events.AfterSequence(0))
	ev := <-stream.C
	assert.Equal(t, "session.opened", ev.Kind, "replayed from the table")
	tick(t, st, s)
	assert.Equal(t, "test.tick", (<-stream.C).Kind, "then live")
	cancel()
	for range stream.C {
	}
	assert.NoError(t, stream.Err())
	assert.Zero(t, hub.Subscribers())
}
