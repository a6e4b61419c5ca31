package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/lib/pq"
)

// Hold keeps the feed across sessions from passing a write that spans
// shards until the write has committed on every node; release ends it.
//
// On Citus a transaction that writes to more than one worker commits with
// two-phase commit: the workers prepare, the coordinator commits, and only
// then do the workers commit what they prepared. Between the coordinator's
// commit and the workers', the coordinator no longer counts the transaction
// as running, so the snapshot horizon the feed reads below can pass its
// events while they are still invisible on their workers: the feed would
// skip them. A Hold is a second transaction, with an id, opened before the
// write takes its own; it keeps the horizon at or below its id, so below
// the write's events, until it is released after the write's COMMIT has
// returned, which Citus returns once every worker has committed. A write
// to one shard (one worker) needs none: Citus commits it on its worker
// before the coordinator's commit (docs/events.md).
type Hold func(ctx context.Context) (release func(), err error)

// HorizonHold returns the Hold that opens a transaction on db and gives it
// an id. db must be a pool of its own: a writer takes its hold before its
// own connection, and holds are never waited for by a connection of the
// writers' pool, so neither pool can deadlock the other.
func HorizonHold(db *sql.DB) Hold {
	return func(ctx context.Context) (func(), error) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("hold the horizon: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `SELECT pg_current_xact_id()`); err != nil {
			_ = tx.Rollback()
			return nil, fmt.Errorf("hold the horizon: %w", err)
		}
		return func() { _ = tx.Rollback() }, nil
	}
}

// OnCitus reports whether db is a Citus coordinator (the citus extension
// is installed in its database): there, writes that span shards need a
// Hold.
func OnCitus(ctx context.Context, db *sql.DB) (bool, error) {
	var yes bool
	err := db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')`).Scan(&yes)
	return yes, err
}

// spanningAttempts bounds how often a write that spans shards is tried
// when Citus ends it as part of a distributed deadlock.
const spanningAttempts = 3

// inSpanningTx is inTx for a write that can span shards: it takes the
// store's Hold, if any, before the transaction begins and releases it
// after the transaction has ended. Citus's distributed deadlock detection
// cancels such a transaction now and then when opens, expiries and
// deletions of one key run at once (TestOpensExpiriesAndDeletionsOfOneKeyAtOnce
// under make test-citus); the transaction rolled back whole, so it is run
// again, up to spanningAttempts times in all.
func (s *Store) inSpanningTx(ctx context.Context, body txBody) error {
	for attempt := 1; ; attempt++ {
		err := s.inHeldTx(ctx, body)
		if attempt == spanningAttempts || !deadlocked(err) {
			return err
		}
	}
}

func (s *Store) inHeldTx(ctx context.Context, body txBody) error {
	if s.hold != nil {
		release, err := s.hold(ctx)
		if err != nil {
			return err
		}
		defer release()
	}
	return s.inTx(ctx, body)
}

// deadlocked reports whether err is PostgreSQL's deadlock_detected, which
// Citus also raises for a distributed deadlock.
func deadlocked(err error) bool {
	var pgx *pgconn.PgError
	var libpq *pq.Error
	switch {
	case errors.As(err, &pgx):
		return pgx.Code == "40P01"
	case errors.As(err, &libpq):
		return libpq.Code == "40P01"
	}
	return false
}
