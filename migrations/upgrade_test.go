package migrations_test

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/google/uuid"
	_ "github.com/jackc/pgx/v5/stdlib" // the pool's driver, as the server uses
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent"
	"sessiongraph/internal/events"
	"sessiongraph/internal/store"
	"sessiongraph/internal/testdb"
	"sessiongraph/migrations"
)

// globalSequence is the last migration of the previous design: one global
// sequence, numbered at commit by a trigger under an advisory lock.
const globalSequence = 20261123110550

// A database written by the previous design upgrades in place: events keep
// their numbers, so a subscriber's cursor from before resumes where it
// stopped, and each session's next event continues from its highest.
func TestAnUpgradedDatabaseKeepsItsEventsAndCursors(t *testing.T) {
	ctx := context.Background()
	empty := func(context.Context, string) error { return nil }
	dsn := testdb.New(t, empty, "empty database")
	require.NoError(t, migrations.ApplyTo(ctx, dsn, globalSequence))
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })

	// Two sessions whose events interleave, written as the previous
	// version wrote them: a placeholder the trigger replaces at commit.
	a, b := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
	for _, id := range []uuid.UUID{a, b} {
		_, err := db.Exec(`INSERT INTO sessions (id, tenant, external_key, domain, ref_counters, gen_counters, metadata,
			ttl_seconds, created_at, updated_at, last_active_at, expires_at)
			VALUES ($1, 'acme', $2, 'kitchen', '{}', '{}', '{}', 3600, now(), now(), now(), now() + interval '1 hour')`, id, id.String())
		require.NoError(t, err)
	}
	for _, id := range []uuid.UUID{a, b, a, a, b} {
		_, err := db.Exec(`INSERT INTO events (id, sequence, session_id, tenant, kind, payload, created_at)
			VALUES ($1, -nextval('events_placeholder_seq'), $2, 'acme', 'session.updated', '{}', now())`, uuid.Must(uuid.NewV7()), id)
		require.NoError(t, err)
	}

	require.NoError(t, migrations.Apply(ctx, dsn))

	client := ent.NewClient(ent.Driver(entsql.OpenDB(dialect.Postgres, db)))
	assert.Equal(t, int64(4), client.Session.GetX(ctx, a).EventSequence, "a session continues from its highest event")
	assert.Equal(t, int64(5), client.Session.GetX(ctx, b).EventSequence)
	var leftovers int
	require.NoError(t, db.QueryRow(`SELECT (SELECT count(*) FROM pg_trigger WHERE tgname = 'events_sequence_at_commit')
		+ (SELECT count(*) FROM pg_class WHERE relkind = 'S' AND relname LIKE 'events_%_seq')`).Scan(&leftovers))
	assert.Zero(t, leftovers, "no trigger, no sequence")

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	hub := events.NewHub(db, dsn, 0, log)
	bell := events.NewDoorbell(db, hub, log)
	st := store.New(client, db, store.RingOnCommit(bell.Ring))
	hubCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{}, 2)
	go func() { _ = hub.Run(hubCtx); done <- struct{}{} }()
	go func() { bell.Run(hubCtx); done <- struct{}{} }()
	t.Cleanup(func() { stop(); <-done; <-done })

	// A subscriber that had received a's event 3 before the upgrade.
	stream := hub.Subscribe(t.Context(), events.Filter{SessionID: &a}, events.AfterSequence(3))
	w, err := st.Begin(ctx, a)
	require.NoError(t, err)
	_, err = w.Commit(ctx, store.Record(store.Event{Kind: "session.updated"}))
	require.NoError(t, err)
	var got []int64
	for len(got) < 2 {
		select {
		case ev := <-stream.C:
			got = append(got, ev.Sequence)
		case <-time.After(10 * time.Second):
			t.Fatalf("received %v", got)
		}
	}
	assert.Equal(t, []int64{4, 5}, got, "the old event after its cursor, then the new one numbered next")
	newest := client.Session.GetX(ctx, a)
	assert.Equal(t, int64(5), newest.EventSequence)

	// Get-or-create finds the sessions of before by their keys, which the
	// migration distributable entered in session_keys.
	for _, id := range []uuid.UUID{a, b} {
		opened, err := st.Open(ctx, "acme", id.String(), func(*ent.SessionCreate) { t.Fatal("created a second session") })
		require.NoError(t, err)
		assert.False(t, opened.Created)
		assert.Equal(t, id, opened.Session.ID)
	}
}

// itemSearch is the last migration before events knew their turn.
const itemSearch = 20261207230000

// The migration event_turn gives the events written before it the turn
// their payload names, and leaves the others without one.
func TestAnUpgradeGivesOldEventsTheTurnTheirPayloadNames(t *testing.T) {
	ctx := context.Background()
	empty := func(context.Context, string) error { return nil }
	dsn := testdb.New(t, empty, "empty database")
	require.NoError(t, migrations.ApplyTo(ctx, dsn, itemSearch))
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })

	id := uuid.Must(uuid.NewV7())
	_, err = db.Exec(`INSERT INTO sessions (id, tenant, external_key, domain, ref_counters, gen_counters, metadata,
		ttl_seconds, created_at, updated_at, last_active_at, expires_at, current_turn, event_sequence)
		VALUES ($1, 'acme', $2, 'kitchen', '{}', '{}', '{}', 3600, now(), now(), now(), now() + interval '1 hour', 2, 4)`, id, id.String())
	require.NoError(t, err)
	// A build before the first turn names turn 0, which is null as it is for
	// new events; a number no turn can be (a fraction, one past bigint) is
	// left null rather than failing the upgrade.
	for i, payload := range []string{`{"tenant": "acme", "externalKey": "k"}`, `{"turn": 1}`, `{"changes": 2, "table": "recipes"}`, `{"turn": 2, "reason": "x"}`,
		`{"turn": 0}`, `{"turn": 1.5}`, `{"turn": 99999999999999999999}`} {
		_, err := db.Exec(`INSERT INTO events (id, sequence, session_id, xid, tenant, kind, payload, created_at)
			VALUES ($1, $2, $3, 0, 'acme', 'session.updated', $4, now())`, uuid.Must(uuid.NewV7()), i+1, id, payload)
		require.NoError(t, err)
	}

	require.NoError(t, migrations.Apply(ctx, dsn))
	var turns []string
	rows, err := db.Query(`SELECT COALESCE(turn::text, '-') FROM events WHERE session_id = $1 ORDER BY sequence`, id)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var turn string
		require.NoError(t, rows.Scan(&turn))
		turns = append(turns, turn)
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, []string{"-", "1", "-", "2", "-", "-", "-"}, turns)
}
