package store

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	_ "github.com/jackc/pgx/v5/stdlib" // the pool's driver, as the server uses
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent"
	"sessiongraph/ent/event"
	"sessiongraph/ent/session"
	"sessiongraph/internal/testdb"
	"sessiongraph/migrations"
)

// A transaction can take its id before it waits for a session's lock (here:
// it locks session A, then waits for B, which a later transaction holds).
// It then writes B's next event after the later transaction's, with a
// smaller transaction id. An event's xid is at least the first id not yet
// given out when its statement began, which is past the later
// transaction's, so a feed ordered by xid still shows B's events in their
// order.
func TestEventXidNeverDecreasesWithinASession(t *testing.T) {
	db, err := sql.Open("pgx", testdb.New(t, migrations.Apply, migrations.Fingerprint()))
	require.NoError(t, err)
	client := ent.NewClient(ent.Driver(entsql.OpenDB(dialect.Postgres, db)))
	t.Cleanup(func() { client.Close() })
	st := New(client, db)
	ctx := context.Background()
	open := func(key string) *ent.Session {
		o, err := st.Open(ctx, "acme", key, func(c *ent.SessionCreate) { c.SetDomain("kitchen").SetTTLSeconds(3600) })
		require.NoError(t, err)
		return o.Session
	}
	a, b := open("a"), open("b")

	early := make(chan int64)   // the early transaction's id, once it has locked A
	holding := make(chan int64) // the later transaction's id, once it holds B
	proceed := make(chan struct{})
	twoSessions := make(chan error, 1)
	go func() {
		twoSessions <- st.inTx(ctx, func(tx *ent.Tx, now time.Time) ([]sessionEvent, error) {
			lockedA, err := tx.Session.Query().Where(session.ID(a.ID)).ForUpdate().Only(ctx)
			if err != nil {
				return nil, err
			}
			xid, err := currentXid(tx)
			if err != nil {
				return nil, err
			}
			early <- xid
			<-proceed
			lockedB, err := tx.Session.Query().Where(session.ID(b.ID)).ForUpdate().Only(ctx) // waits for the later one
			if err != nil {
				return nil, err
			}
			for _, s := range []*ent.Session{lockedA, lockedB} {
				if err := tx.Session.UpdateOneID(s.ID).SetEventSequence(s.EventSequence + 1).Exec(ctx); err != nil {
					return nil, err
				}
			}
			return []sessionEvent{nextEvent(lockedA, Event{Kind: "test.early"}), nextEvent(lockedB, Event{Kind: "test.early"})}, nil
		})
	}()
	var earlyXid int64
	select {
	case earlyXid = <-early:
	case err := <-twoSessions:
		t.Fatalf("the early transaction failed: %v", err)
	}

	later := make(chan error, 1)
	go func() {
		later <- func() error {
			w, err := st.Begin(ctx, b.ID)
			if err != nil {
				return err
			}
			defer w.Rollback()
			xid, err := currentXid(w.Tx)
			if err != nil {
				return err
			}
			holding <- xid
			<-proceed // the early transaction now waits for B
			_, err = w.Commit(ctx, Record(Event{Kind: "test.later"}))
			return err
		}()
	}()
	var laterXid int64
	select {
	case laterXid = <-holding:
	case err := <-later:
		t.Fatalf("the later transaction failed: %v", err)
	}
	require.Greater(t, laterXid, earlyXid, "the later transaction took its id after the early one")
	close(proceed)
	require.NoError(t, <-later)
	require.NoError(t, <-twoSessions)

	evs := client.Event.Query().Where(event.SessionID(b.ID)).Order(event.BySequence()).AllX(ctx)
	require.Len(t, evs, 3)
	assert.Equal(t, []string{"session.opened", "test.later", "test.early"}, []string{evs[0].Kind, evs[1].Kind, evs[2].Kind},
		"B's events in the order their transactions committed")
	assert.GreaterOrEqual(t, evs[1].Xid, laterXid, "an event's xid is at least its transaction's")
	// Never below: the early transaction's event is numbered from the
	// snapshot's xmax when it is written, past every id given out before;
	// it equals the later one's when no id was given out in between (both
	// took the same xmax), and the session's sequence orders them.
	assert.GreaterOrEqual(t, evs[2].Xid, evs[1].Xid,
		"the early transaction's event on B does not go below the later one's: past every id given out before it was written")
	assert.Greater(t, evs[2].Xid, earlyXid, "the early transaction's event on B is numbered past its own id")
	onA := client.Event.Query().Where(event.SessionID(a.ID), event.Kind("test.early")).OnlyX(ctx)
	assert.Equal(t, evs[2].Xid, onA.Xid, "one statement wrote both of the early transaction's events, with one number")
	assert.Greater(t, onA.Xid, earlyXid)
}

func currentXid(tx *ent.Tx) (int64, error) {
	rows, err := tx.QueryContext(context.Background(), `SELECT pg_current_xact_id()::text::bigint`)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var xid int64
	if rows.Next() {
		err = rows.Scan(&xid)
	}
	return xid, errors.Join(err, rows.Err())
}
