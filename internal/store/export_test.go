package store

import (
	"context"

	"github.com/google/uuid"

	"sessiongraph/ent"
)

// Lock is Begin's lock of session id on tx, for a test to compare with
// ent's read even where Begin refuses the session (expired).
func Lock(s *Store, ctx context.Context, tx *ent.Tx, id uuid.UUID) (*ent.Session, error) {
	query, args, err := s.lockStatement(ctx, id)
	if err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return lockedRow(rows)
}
