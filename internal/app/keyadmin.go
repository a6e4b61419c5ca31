package app

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/ent/apikey"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/events"
	"sessiongraph/internal/store"
)

// KeyAdmin manages API keys without serving anything: `sessiongraph keys`
// uses it, which is how an operator replaces a lost admin key. It works as
// the system, across tenants, on the database it migrated.
type KeyAdmin struct {
	db     *sql.DB
	client *ent.Client
	store  *store.Store
	// rung are the sessions whose events the last write committed.
	rung []uuid.UUID
}

// OpenKeyAdmin migrates the database at cfg.DatabaseURL and opens it.
func OpenKeyAdmin(ctx context.Context, cfg Config) (*KeyAdmin, error) {
	db, client, onPool, err := openDatabase(ctx, cfg, &outage{log: cfg.Logger})
	if err != nil {
		return nil, err
	}
	k := &KeyAdmin{db: db, client: client}
	k.store = store.New(client, db, append(onPool, store.ConfinedBy(access.TenantScope),
		store.RingOnCommit(func(sessions []uuid.UUID) { k.rung = append(k.rung, sessions...) }))...)
	return k, nil
}

// Close releases the database connections.
func (k *KeyAdmin) Close() error { return k.client.Close() }

// Create stores a new key and returns it with its row; the key is shown
// this once and only its hash is kept.
func (k *KeyAdmin) Create(ctx context.Context, in access.NewKey) (string, *ent.APIKey, error) {
	return access.CreateKey(access.System(ctx), k.client.APIKey, in)
}

// List returns every key, revoked ones included, newest first.
func (k *KeyAdmin) List(ctx context.Context) ([]*ent.APIKey, error) {
	return k.client.APIKey.Query().Order(ent.Desc(apikey.FieldCreatedAt), ent.Asc(apikey.FieldID)).All(access.System(ctx))
}

// Revoke revokes the key with id through the store, and rings the doorbell
// as a server does after a commit, so that every running replica hears of
// it at once (not at its hub's next poll) and stops accepting the key.
func (k *KeyAdmin) Revoke(ctx context.Context, id string) (*ent.APIKey, error) {
	uid, err := uuid.Parse(id)
	if err != nil {
		return nil, apperr.New(apperr.InvalidID, "%q is not a key id: `sessiongraph keys list` shows them", id)
	}
	row, err := k.store.RevokeKey(access.System(ctx), uid)
	if err != nil {
		return nil, fmt.Errorf("revoke %s: %w", id, err)
	}
	if len(k.rung) > 0 {
		if err := events.RingOnce(ctx, k.db, k.rung); err != nil {
			return row, fmt.Errorf("revoked %s, but could not tell the running servers (they will notice within seconds): %w", id, err)
		}
		k.rung = nil
	}
	return row, nil
}
