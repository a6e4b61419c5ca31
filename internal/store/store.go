// Package store is the one mutation point (seed 003's golden rule): every
// write to a session runs through Write or Open, which own the transaction,
// the session row lock, the activity timestamps, the event and its doorbell.
//
// An event is numbered within its session, under the session's row lock, so
// no write waits for another session's; docs/events.md has the rules.
package store

import (
	"context"
	"fmt"
	"time"

	entsql "entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/ent/session"
	"sessiongraph/internal/apperr"
)

// Event is what a change records about itself: its kind and a small payload.
type Event struct {
	Kind    string
	Payload map[string]any
}

// Work is what a change sees inside its transaction. A change reads and
// writes only through Tx: waiting for a second pool connection while holding
// the transaction's can deadlock the pool when every connection is held by a
// write doing the same.
type Work struct {
	Tx *ent.Tx
	// Session is the session row as locked at the start of the transaction.
	Session *ent.Session
	// Now is the single timestamp of this commit.
	Now time.Time

	update   *ent.SessionUpdate
	activity Activity
	earlier  []Event
}

// RecordFirst records ev before the change's own event, in the same commit:
// a change that does in one commit what two writes would (recordExchange
// begins and ends a turn) records both their events, in order, so that
// subscribers see what the two writes would have shown them.
func (w *Work) RecordFirst(ev Event) { w.earlier = append(w.earlier, ev) }

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

// CountAs says how this write counts toward the session's expiry.
func (w *Work) CountAs(a Activity) { w.activity = a }

// Update returns the pending update of the session row, saved once together
// with the activity stamps, so that a change costs no extra statement. (It is
// ent's update-by-predicate builder: UpdateOne would read the row back.)
func (w *Work) Update() *ent.SessionUpdate { return w.update }

// Change applies one write inside the session's transaction and says which
// event it yields. Returning an error rolls everything back.
type Change func(ctx context.Context, w *Work) (Event, error)

// Store writes sessions.
type Store struct {
	client *ent.Client
	now    func() time.Time
	// committed rings the doorbell after a commit that appended events; it
	// must not block (see OnCommit).
	committed func(sessions []uuid.UUID)
	// hold, when set, is taken by writes that can span shards (Hold).
	hold Hold
}

// New returns a Store over client. now may be nil (time.Now).
func New(client *ent.Client, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{client: client, now: now, committed: func([]uuid.UUID) {}}
}

// OnCommit sets what rings after every commit that appended events, with
// the sessions they belong to: the doorbell, outside the transaction, so
// that no commit waits for PostgreSQL's notification lock. ring must not
// block. Set it before the first write.
func (s *Store) OnCommit(ring func(sessions []uuid.UUID)) { s.committed = ring }

// Write runs change against a live session: lock the row, refuse an expired
// session, apply the change, stamp lastActiveAt and expiresAt, append the
// event, ring the doorbell, commit.
func (s *Store) Write(ctx context.Context, sessionID uuid.UUID, change Change) error {
	_, err := s.write(ctx, sessionID, change, false)
	return err
}

// Update is Write for a caller that needs the session as committed; reading
// it back costs one more statement.
func (s *Store) Update(ctx context.Context, sessionID uuid.UUID, change Change) (*ent.Session, error) {
	return s.write(ctx, sessionID, change, true)
}

func (s *Store) write(ctx context.Context, sessionID uuid.UUID, change Change, readBack bool) (*ent.Session, error) {
	if ok, out, err := joined(ctx, sessionID, change, readBack); ok { // see Join
		return out, err
	}
	var out *ent.Session
	err := s.inTx(ctx, func(tx *ent.Tx, now time.Time) ([]sessionEvent, error) {
		locked, err := tx.Session.Query().Where(session.ID(sessionID)).ForUpdate().Only(ctx)
		if ent.IsNotFound(err) {
			return nil, apperr.New(apperr.NotFound, "session %s not found", sessionID)
		}
		if err != nil {
			return nil, err
		}
		if expired(locked, now) {
			return nil, apperr.New(apperr.SessionExpired,
				"session %s expired at %s; open a new session with the same external key to continue",
				sessionID, locked.ExpiresAt.UTC().Format(time.RFC3339))
		}
		w := &Work{Tx: tx, Session: locked, Now: now, update: tx.Session.Update().Where(session.ID(locked.ID))}
		ev, err := change(ctx, w)
		if err != nil {
			return nil, err
		}
		events := make([]sessionEvent, 0, len(w.earlier)+1)
		for i, e := range append(w.earlier, ev) {
			next := nextEvent(locked, e)
			next.sequence += int64(i)
			events = append(events, next)
		}
		prefix, err := newEventsBefore(events, now)
		if err != nil {
			return nil, err
		}
		// The events ride on the session's update: one statement for both.
		w.update.SetEventSequence(events[len(events)-1].sequence).Modify(func(u *entsql.UpdateBuilder) {
			u.Prefix(prefix)
		})
		if out, err = stamp(ctx, w, readBack); err != nil {
			return nil, err
		}
		for i := range events {
			events[i].appended = true
		}
		return events, nil
	})
	return out, err
}

// stamp saves the change's session update together with the activity
// timestamps; the TTL is read back from the update so a new TTL counts now.
func stamp(ctx context.Context, w *Work, readBack bool) (*ent.Session, error) {
	ttl := w.Session.TTLSeconds
	if v, ok := w.update.Mutation().TTLSeconds(); ok {
		ttl = v
	}
	lifetime := time.Duration(ttl) * time.Second
	switch w.activity {
	case Started:
		w.update.SetExpiresAt(w.Now.Add(lifetime))
	case Failed:
		w.update.SetExpiresAt(w.Session.LastActiveAt.Add(lifetime))
	default:
		w.update.SetLastActiveAt(w.Now).SetExpiresAt(w.Now.Add(lifetime))
	}
	if err := w.update.Exec(ctx); err != nil || !readBack {
		return nil, err
	}
	return w.Tx.Session.Get(ctx, w.Session.ID)
}

func expired(s *ent.Session, now time.Time) bool {
	return s.Status == session.StatusExpired || !now.Before(s.ExpiresAt)
}

// sessionEvent is an event, the session it belongs to and its number there.
type sessionEvent struct {
	session  *ent.Session
	sequence int64
	Event
	// appended is true once a statement of the write has appended it.
	appended bool
}

// nextEvent numbers ev as the next event of locked, a session row locked
// by this transaction; the caller stores the number on the row.
func nextEvent(locked *ent.Session, ev Event) sessionEvent {
	return sessionEvent{session: locked, sequence: locked.EventSequence + 1, Event: ev}
}

// txBody does a write's work and returns the events it produced: one per
// session it changed.
type txBody func(tx *ent.Tx, now time.Time) ([]sessionEvent, error)

// inTx runs body in a transaction, then appends its events, commits and
// rings the doorbell.
func (s *Store) inTx(ctx context.Context, body txBody) (err error) {
	tx, err := s.client.Tx(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	now := s.now().UTC()
	events, err := body(tx, now)
	if err != nil {
		return err
	}
	if err := appendEvents(ctx, tx, events, now); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	if len(events) > 0 {
		sessions := make([]uuid.UUID, len(events))
		for i, ev := range events {
			sessions[i] = ev.session.ID
		}
		s.committed(sessions)
	}
	return nil
}
