package app

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/ent/apikey"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/store"
)

// KeyAdmin manages API keys without serving anything: `sessiongraph keys`
// uses it, which is how an operator replaces a lost admin key. It works as
// the system, across tenants, on the database it migrated.
type KeyAdmin struct {
	client *ent.Client
	store  *store.Store
}

// OpenKeyAdmin migrates the database at cfg.DatabaseURL and opens it.
func OpenKeyAdmin(ctx context.Context, cfg Config) (*KeyAdmin, error) {
	_, client, err := openDatabase(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &KeyAdmin{client: client, store: store.New(client, nil)}, nil
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

// Revoke revokes the key with id through the store, so that every running
// replica hears of it and stops accepting the key.
func (k *KeyAdmin) Revoke(ctx context.Context, id string) (*ent.APIKey, error) {
	uid, err := uuid.Parse(id)
	if err != nil {
		return nil, apperr.New(apperr.InvalidID, "%q is not a key id: `sessiongraph keys list` shows them", id)
	}
	row, err := k.store.RevokeKey(access.System(ctx), uid)
	if err != nil {
		return nil, fmt.Errorf("revoke %s: %w", id, err)
	}
	return row, nil
}
