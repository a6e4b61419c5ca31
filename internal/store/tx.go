package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	entsql "entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/ent/session"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/pipedb"
)

// Activity says how a write counts toward the session's expiry. Only
// committed, successful work is activity; a turn's success is known only
// when it ends, so its beginning holds the session open without counting,
// and its failure leaves the activity as the last success left it.
type Activity int

const (
	// Succeeded is committed, successful work (the default): lastActiveAt
	// is now, and the session expires a TTL from now.
	Succeeded Activity = iota
	// Started is work whose success is not known yet (a turn begins): the
	// session expires no sooner than a TTL from now, so the reaper does not
	// expire it under a running turn, but lastActiveAt stays.
	Started
	// Failed is work that ended in failure (a turn fails): lastActiveAt
	// stays, and the session expires a TTL after it again, as if the
	// failed work had not happened.
	Failed
)

// Tx is one write to a live session in progress, from Begin to Commit or
// Rollback: a transaction that holds the session's row lock. The caller
// reads and writes rows through Tx, changes the session row through
// Update, and ends with Commit, which adds the activity stamps and the
// events. A write reads and writes only through its Tx: waiting for a
// second pool connection while holding the transaction's can deadlock the
// pool when every connection is held by a write doing the same.
type Tx struct {
	// Tx is the write's transaction.
	Tx *ent.Tx
	// Session is the session row as locked by Begin.
	Session *ent.Session
	// Now is the single timestamp of this commit.
	Now time.Time

	store  *Store
	update *ent.SessionUpdate
	ended  bool
}

// Mutation is what a write decided beyond the rows it wrote through its
// Tx: the events it records, in order (at least one), and how it counts
// toward the session's expiry. A write that does in one commit what two
// writes would (recordExchange begins and ends a turn) records both their
// events, so that subscribers see what the two writes would have shown.
type Mutation struct {
	Events   []Event
	Activity Activity
	// ReadBack asks Commit for the session as committed, which costs one
	// more statement.
	ReadBack bool
}

// Record is the Mutation of a successful write that records ev.
func Record(ev Event) Mutation { return Mutation{Events: []Event{ev}} }

// Begin starts a write to a live session: it begins a transaction, locks
// the session's row and refuses a session that is missing (NOT_FOUND) or
// expired (SESSION_EXPIRED). The caller must end the write with Commit or
// Rollback; deferring Rollback is safe after Commit.
func (s *Store) Begin(ctx context.Context, sessionID uuid.UUID) (*Tx, error) {
	tx, err := s.client.Tx(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	now := s.now().UTC()
	locked, err := s.lock(ctx, tx, sessionID)
	switch {
	case ent.IsNotFound(err):
		err = apperr.New(apperr.NotFound, "session %s not found", sessionID)
	case err == nil && expired(locked, now):
		err = apperr.New(apperr.SessionExpired,
			"session %s expired at %s; open a new session with the same external key to continue",
			sessionID, locked.ExpiresAt.UTC().Format(time.RFC3339))
	}
	if err != nil {
		_ = tx.Rollback()
		return nil, err
	}
	return &Tx{Tx: tx, Session: locked, Now: now, store: s,
		update: tx.Session.Update().Where(session.ID(locked.ID))}, nil
}

// Update returns the pending update of the session row, saved once by
// Commit together with the activity stamps and the events, so that a
// change costs no extra statement. (It is ent's update-by-predicate
// builder: UpdateOne would read the row back.)
func (t *Tx) Update() *ent.SessionUpdate { return t.update }

// Rollback ends the write without a change; after Commit it does nothing.
func (t *Tx) Rollback() {
	if !t.ended {
		t.ended = true
		_ = t.Tx.Rollback()
	}
}

// Commit ends the write: it saves the session's update with the activity
// stamps, appends m's events in the same statement, commits and rings the
// doorbell. It returns the session as committed when m asks for it (else
// nil). On an error nothing of the write remains.
func (t *Tx) Commit(ctx context.Context, m Mutation) (out *ent.Session, err error) {
	if t.ended {
		return nil, errors.New("store: the write has ended already")
	}
	defer func() {
		if err != nil {
			t.Rollback()
		}
	}()
	if len(m.Events) == 0 {
		return nil, errors.New("store: a change must name its event")
	}
	events := make([]sessionEvent, len(m.Events))
	for i, ev := range m.Events {
		events[i] = sessionEvent{session: t.Session, sequence: t.Session.EventSequence + 1 + int64(i), Event: ev}
	}
	prefix, err := newEventsBefore(events, t.Now)
	if err != nil {
		return nil, err
	}
	// The events ride on the session's update: one statement for both.
	t.update.SetEventSequence(events[len(events)-1].sequence).Modify(func(u *entsql.UpdateBuilder) {
		u.Prefix(prefix)
	})
	t.stamp(m.Activity)
	// Without a read back the update is the write's last statement: on the
	// server's pool it carries the COMMIT in its own exchange, and the
	// commit in finish has nothing left to do.
	last := ctx
	if !m.ReadBack {
		last = pipedb.CommitWith(ctx)
	}
	if err := t.update.Exec(last); err != nil {
		return nil, err
	}
	if m.ReadBack {
		if out, err = t.Tx.Session.Get(ctx, t.Session.ID); err != nil {
			return nil, err
		}
	}
	for i := range events {
		events[i].appended = true
	}
	t.ended = true
	if err := t.store.finish(ctx, t.Tx, events, t.Now); err != nil {
		_ = t.Tx.Rollback()
		return nil, err
	}
	return out, nil
}

// stamp sets the activity timestamps on the session's update; the TTL is
// read from the update so that a new TTL counts now.
func (t *Tx) stamp(a Activity) {
	ttl := t.Session.TTLSeconds
	if v, ok := t.update.Mutation().TTLSeconds(); ok {
		ttl = v
	}
	lifetime := time.Duration(ttl) * time.Second
	switch a {
	case Started:
		t.update.SetExpiresAt(t.Now.Add(lifetime))
	case Failed:
		t.update.SetExpiresAt(t.Session.LastActiveAt.Add(lifetime))
	default:
		t.update.SetLastActiveAt(t.Now).SetExpiresAt(t.Now.Add(lifetime))
	}
}
