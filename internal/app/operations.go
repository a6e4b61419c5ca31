package app

import (
	"context"

	"sessiongraph/ent"
	"sessiongraph/internal/access"
	"sessiongraph/internal/engine"
	"sessiongraph/internal/store"
	"sessiongraph/migrations"
)

// Operations is the engine without a server: the operator's commands
// (`sessiongraph delete-user`, `export-session`, `import-session`) use it, on the database it migrated, with
// every write through the store as the server's.
type Operations struct {
	Client *ent.Client
	Engine *engine.Engine
	// SchemaVersion is the version of the database's schema, which
	// OpenOperations brought to this binary's latest.
	SchemaVersion uint
}

// OpenOperations migrates the database at cfg.DatabaseURL and opens it.
func OpenOperations(ctx context.Context, cfg Config) (*Operations, error) {
	db, client, onPool, err := openDatabase(ctx, cfg, &outage{log: cfg.Logger})
	if err != nil {
		return nil, err
	}
	eng := engine.New(client, store.New(client, db, append(onPool, store.ConfinedBy(access.TenantScope))...), nil, engine.Config{DefaultTTL: cfg.DefaultTTL, DefaultDomain: cfg.DefaultDomain,
		DomainCacheTTL: cfg.DomainCacheTTL, Retention: cfg.Retention})
	version, err := migrations.Latest()
	if err != nil {
		client.Close()
		return nil, err
	}
	return &Operations{Client: client, Engine: eng, SchemaVersion: version}, nil
}

// Close releases the database connections.
func (o *Operations) Close() error { return o.Client.Close() }
