package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/ent/apikey"
	"sessiongraph/internal/apperr"
)

// SystemSession is the pseudo-session of events that belong to no session:
// API key revocations. No session has its id (uuid.Nil), so no session's
// events, edge or subscription shows them, and the sessionsChanged feed
// keeps to session kinds. Its events are numbered like a session's; as it
// has no row to lock, writers take systemSessionLock instead.
var SystemSession = uuid.Nil

// systemSessionLock is the transaction-scoped advisory lock that stands for
// the SystemSession's row lock. Only revocations, an admin's rare act, take
// it; no session's write does.
const systemSessionLock = 0x5e5510_0003

// RevokeKey revokes an API key for good and records the revocation as an
// event in the same transaction, so that every replica's key cache hears of
// it. Revoking a revoked key changes nothing and records nothing.
func (s *Store) RevokeKey(ctx context.Context, id uuid.UUID) (*ent.APIKey, error) {
	var out *ent.APIKey
	err := s.inSpanningTx(ctx, func(tx *ent.Tx, now time.Time) ([]sessionEvent, error) {
		row, err := tx.APIKey.Query().Where(apikey.ID(id)).ForUpdate().Only(ctx)
		if ent.IsNotFound(err) {
			return nil, apperr.New(apperr.NotFound, "API key %s not found", id)
		}
		if err != nil {
			return nil, err
		}
		if row.RevokedAt != nil {
			out = row
			return nil, nil
		}
		if out, err = tx.APIKey.UpdateOne(row).SetRevokedAt(now).Save(ctx); err != nil {
			return nil, err
		}
		newest, err := lockSystemSession(ctx, tx)
		if err != nil {
			return nil, err
		}
		// The event's "session" is only its session_id and tenant.
		system := &ent.Session{ID: SystemSession, Tenant: row.Tenant, EventSequence: newest}
		return []sessionEvent{nextEvent(system, Event{Kind: KindKeyRevoked, Payload: map[string]any{"keyID": id.String()}})}, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// lockSystemSession takes the SystemSession's lock and returns the sequence
// of its newest event, read once the lock is held (a statement of its own,
// so that its snapshot sees the last holder's commit).
func lockSystemSession(ctx context.Context, tx *ent.Tx) (int64, error) {
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(systemSessionLock)); err != nil {
		return 0, fmt.Errorf("system session lock: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT COALESCE(MAX(sequence), 0) FROM events WHERE session_id = $1`, SystemSession)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var newest int64
	if rows.Next() {
		if err := rows.Scan(&newest); err != nil {
			return 0, err
		}
	}
	return newest, rows.Err()
}
