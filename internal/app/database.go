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
	"sessiongraph/internal/pipedb"
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
	watchDetachedReads(conn)
	db := openPool(conn)
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

// openPool opens a pgx pool on conn, which sends UUIDs as ent expects. Its
// transactions send BEGIN with their first statement and may send COMMIT
// with their last (internal/pipedb).
func openPool(conn *pgx.ConnConfig) *sql.DB {
	db := pipedb.OpenDB(*conn, stdlib.OptionAfterConnect(func(_ context.Context, c *pgx.Conn) error {
		encodeUUIDs(c.TypeMap())
		return nil
	}))
	db.SetConnMaxIdleTime(5 * time.Minute)
	return db
}

// keyPoolConns is the size of the pool API keys are checked on: a lookup
// is one indexed statement, and a key is looked up once per replica until
// it is revoked, so two connections serve many new keys a second.
const keyPoolConns = 2

// openKeyClient opens the ent client API keys are checked and touched on,
// on a small pool of its own: a full main pool (the shares keep any one key
// or tenant from filling it, but all tenants together may) never stops a
// key from being checked.
func openKeyClient(cfg Config, down *outage) (*sql.DB, *ent.Client, error) {
	conn, err := pgx.ParseConfig(cfg.DatabaseURL)
	if err != nil {
		return nil, nil, fmt.Errorf("open database: %w", err)
	}
	db := openPool(conn)
	db.SetMaxOpenConns(keyPoolConns)
	db.SetMaxIdleConns(keyPoolConns)
	client := ent.NewClient(ent.Driver(reportUnavailable(entsql.OpenDB(dialect.Postgres, db), down)))
	access.Confine(client)
	return db, client, nil
}
