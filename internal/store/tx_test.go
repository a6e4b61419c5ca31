package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent"
	"sessiongraph/ent/event"
	"sessiongraph/internal/store"
)

// A Mutation says how its write counts toward the session's expiry, and
// Commit stamps the session accordingly, with the store's clock: work that
// succeeded is activity; a turn that begins holds the session open for a
// TTL without being activity; a turn that fails puts the expiry back to a
// TTL after the last activity. Its events are numbered in the order given.
func TestCommitStampsTheSessionAsItsMutationCounts(t *testing.T) {
	ctx := context.Background()
	clock := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	st, client, _ := newStore(t, store.Clock(func() time.Time { return clock }))
	s := openOne(t, st, "k") // a TTL of an hour, opened at 12:00
	commit := func(at time.Time, m store.Mutation) *ent.Session {
		t.Helper()
		clock = at
		w, err := st.Begin(ctx, s.ID)
		require.NoError(t, err)
		defer w.Rollback()
		m.ReadBack = true
		got, err := w.Commit(ctx, m)
		require.NoError(t, err)
		return got
	}
	hour := time.Hour

	got := commit(clock.Add(10*time.Minute), store.Record(store.Event{Kind: "test.succeeded"}))
	assert.Equal(t, "12:10", got.LastActiveAt.UTC().Format("15:04"), "success is activity")
	assert.Equal(t, got.LastActiveAt.Add(hour), got.ExpiresAt)

	got = commit(clock.Add(20*time.Minute), store.Mutation{Activity: store.Started,
		Events: []store.Event{{Kind: "test.began"}, {Kind: "test.noted"}}})
	assert.Equal(t, "12:10", got.LastActiveAt.UTC().Format("15:04"), "a beginning is not activity yet")
	assert.Equal(t, "13:30", got.ExpiresAt.UTC().Format("15:04"), "but holds the session open a TTL from now")

	got = commit(clock.Add(5*time.Minute), store.Mutation{Activity: store.Failed, Events: []store.Event{{Kind: "test.failed"}}})
	assert.Equal(t, "12:10", got.LastActiveAt.UTC().Format("15:04"))
	assert.Equal(t, "13:10", got.ExpiresAt.UTC().Format("15:04"), "a failure expires a TTL after the last activity")

	kinds := client.Event.Query().Where(event.SessionID(s.ID)).Order(event.BySequence()).Select(event.FieldKind).StringsX(ctx)
	assert.Equal(t, []string{"session.opened", "test.succeeded", "test.began", "test.noted", "test.failed"}, kinds)
	assert.Equal(t, int64(5), got.EventSequence)
}
