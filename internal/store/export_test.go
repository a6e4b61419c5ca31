package store

import (
	"context"

	"github.com/google/uuid"

	"sessiongraph/ent"
)

// Lock is Begin's lock of session id on tx, for a test to compare with
// ent's read even where Begin refuses the session (expired).
func Lock(s *Store, ctx context.Context, tx *ent.Tx, id uuid.UUID) (*ent.Session, error) {
	return s.lock(ctx, tx, id)
}
