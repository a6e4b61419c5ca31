// Package store is the one mutation point: every write to a session runs
// through a Tx (Begin, then Commit with one Mutation) or through Open and
// the lifecycle writes, which own the transaction, the session row lock,
// the activity timestamps, the events and their doorbell. The store knows
// nothing of the domain's rules: the engine reads through a Tx, decides in
// plain code, and hands back what it decided.
//
// An event is numbered within its session, under the session's row lock, so
// no write waits for another session's; docs/events.md has the rules.
package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"entgo.io/ent/dialect"
	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/ent/session"
	"sessiongraph/internal/dbhook"
)

// Event is what a change records about itself: its kind and a small payload.
type Event struct {
	Kind    string
	Payload map[string]any
}

// Store writes sessions.
type Store struct {
	client *ent.Client
	// db is the pool a write (Begin) takes its connection from, and open
	// puts ent on that connection (OnConnection).
	db   *sql.DB
	open func(dialect.Driver) *ent.Client
	// exchange runs each exchange of a write (Exchanges); by default it
	// only runs it.
	exchange dbhook.Hook
	now      func() time.Time
	// committed rings the doorbell after a commit that appended events; it
	// must not block (see RingOnCommit).
	committed func(sessions []uuid.UUID)
	// hold, when set, is taken by writes that can span shards (Hold).
	hold Hold
	// scope, when set, is the tenant the client's interceptors confine a
	// query on sessions to (ConfinedBy).
	scope func(context.Context) (string, error)
}

// Option sets one of a Store's dependencies at construction.
type Option func(*Store)

// Clock makes the store read the time from now instead of time.Now.
func Clock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// RingOnCommit makes the store call ring after every commit that appended
// events, with the sessions they belong to: the doorbell, outside the
// transaction, so that no commit waits for PostgreSQL's notification lock.
// ring must not block.
func RingOnCommit(ring func(sessions []uuid.UUID)) Option {
	return func(s *Store) { s.committed = ring }
}

// HoldHorizon makes every write that can span shards (opening a new
// session: its key and its row; the bulk expiry, the purge and the reaper;
// a key's revocation) take h first; see Hold.
func HoldHorizon(h Hold) Option { return func(s *Store) { s.hold = h } }

// OnConnection makes the store put ent on a write's connection with open
// (its interceptors and driver wrappers, as the client's); by default a
// plain client.
func OnConnection(open func(dialect.Driver) *ent.Client) Option {
	return func(s *Store) { s.open = open }
}

// Exchanges makes every exchange of a write (Begin's and Commit's batches,
// taking the connection) run through hook, as ent's statements run
// through the client's driver wrappers.
func Exchanges(hook dbhook.Hook) Option { return func(s *Store) { s.exchange = hook } }

// New returns a Store over client, whose writes (Begin) take their
// connection from db, a pool of pgx's stdlib driver (the client's own), with
// the dependencies opts give: by default it reads time.Now, rings nothing
// and holds no horizon.
func New(client *ent.Client, db *sql.DB, opts ...Option) *Store {
	s := &Store{client: client, db: db, now: time.Now, committed: func([]uuid.UUID) {},
		open: func(d dialect.Driver) *ent.Client { return ent.NewClient(ent.Driver(d)) },
		exchange: func(ctx context.Context, _ dbhook.Kind, _ string, run func(context.Context) error) error {
			return run(ctx)
		}}
	for _, o := range opts {
		o(s)
	}
	return s
}

func expired(s *ent.Session, now time.Time) bool {
	return s.Status == session.StatusExpired || !now.Before(s.ExpiresAt)
}

// sessionEvent is an event, the session it belongs to and its number there.
type sessionEvent struct {
	session  *ent.Session
	sequence int64
	// current is the session's current turn once the write is done: the
	// event's turn when its payload names none (eventTurn).
	current int
	Event
	// appended is true once a statement of the write has appended it.
	appended bool
}

// nextEvent numbers ev as the next event of locked, a session row locked
// by this transaction; the caller stores the number on the row.
func nextEvent(locked *ent.Session, ev Event) sessionEvent {
	return sessionEvent{session: locked, sequence: locked.EventSequence + 1, current: locked.CurrentTurn, Event: ev}
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
	return s.finish(ctx, tx, events, now)
}

// finish appends the events no statement of the write carried, commits,
// and rings the doorbell.
func (s *Store) finish(ctx context.Context, tx *ent.Tx, events []sessionEvent, now time.Time) error {
	if err := appendEvents(ctx, tx, events, now); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	s.rang(events)
	return nil
}

// rang rings the doorbell for a commit's events.
func (s *Store) rang(events []sessionEvent) {
	if len(events) > 0 {
		sessions := make([]uuid.UUID, len(events))
		for i, ev := range events {
			sessions[i] = ev.session.ID
		}
		s.committed(sessions)
	}
}
