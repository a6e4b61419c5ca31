package app

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"sessiongraph/ent"
	"sessiongraph/internal/access"
	"sessiongraph/internal/tracing"
	"sessiongraph/migrations"
)

// openDatabase migrates the database at cfg.DatabaseURL and opens the pool
// and the ent client on it, every query confined to its caller's tenant;
// o hears of outages.
func openDatabase(ctx context.Context, cfg Config, o *outage) (*sql.DB, *ent.Client, error) {
	if err := migrations.Apply(ctx, cfg.DatabaseURL); err != nil {
		return nil, nil, err
	}
	// pgx, not lib/pq, for the pool: lib/pq prepares every statement with
	// arguments in a round trip of its own before running it, pgx caches
	// the prepared statements per connection, so a statement is one round
	// trip. (The event hub keeps lib/pq's Listener.)
	conn, err := pgx.ParseConfig(cfg.DatabaseURL)
	if err != nil {
		return nil, nil, fmt.Errorf("open database: %w", err)
	}
	db := stdlib.OpenDB(*conn, stdlib.OptionAfterConnect(func(_ context.Context, c *pgx.Conn) error {
		encodeUUIDs(c.TypeMap())
		return nil
	}))
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("database unreachable: %w", err)
	}
	if _, err := sizePool(ctx, db, cfg.MaxOpenConns); err != nil {
		db.Close()
		return nil, nil, err
	}
	drv := reportUnavailable(entsql.OpenDB(dialect.Postgres, db), o)
	if cfg.WrapDriver != nil {
		drv = cfg.WrapDriver(drv)
	}
	if cfg.TracerProvider != nil {
		drv = tracing.Driver(drv, cfg.TracerProvider)
	}
	client := ent.NewClient(ent.Driver(drv))
	access.Confine(client)
	return db, client, nil
}
