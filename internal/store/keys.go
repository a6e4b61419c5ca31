package store

import (
	"context"
	"time"

	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/ent/apikey"
	"sessiongraph/internal/apperr"
)

// KindKeyRevoked is the event of an API key's revocation; its payload names
// the key ("keyID"). It belongs to no session: its session_id is uuid.Nil,
// which no session has, so no session's events, edge or subscription ever
// shows it; the sessionsChanged feed keeps to session kinds.
const KindKeyRevoked = "apikey.revoked"

// RevokeKey revokes an API key for good and records the revocation as an
// event in the same transaction, so that every replica's key cache hears of
// it. Revoking a revoked key changes nothing and records nothing.
func (s *Store) RevokeKey(ctx context.Context, id uuid.UUID) (*ent.APIKey, error) {
	var out *ent.APIKey
	err := s.inTx(ctx, func(tx *ent.Tx, now time.Time) ([]sessionEvent, error) {
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
		// The event's "session" is only its session_id (uuid.Nil) and tenant.
		noSession := &ent.Session{ID: uuid.Nil, Tenant: row.Tenant}
		return []sessionEvent{{noSession, Event{Kind: KindKeyRevoked, Payload: map[string]any{"keyID": id.String()}}}}, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
