package app

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"sessiongraph/ent"
	"sessiongraph/internal/access"
	"sessiongraph/internal/dbhook"
	"sessiongraph/internal/store"
	"sessiongraph/internal/tracing"
	"sessiongraph/migrations"
)

// openDatabase migrates the database at cfg.DatabaseURL and opens the pool
// and the ent client on it, every query confined to its caller's tenant,
// with the options that give a store's writes the same (ent on their
// connection, their exchanges reported and traced); o hears of outages.
func openDatabase(ctx context.Context, cfg Config, o *outage) (*sql.DB, *ent.Client, []store.Option, error) {
	if err := migrations.Apply(ctx, forLibPQ(cfg.DatabaseURL)); err != nil {
		return nil, nil, nil, err
	}
	// pgx, not lib/pq, for the pool: lib/pq prepares every statement with
	// arguments in a round trip of its own before running it, pgx caches
	// the prepared statements per connection, so a statement is one round
	// trip. (The event hub keeps lib/pq's Listener.)
	// The URL's default_query_exec_mode is pgx's, and nothing of ours
	// overrides it: behind PgBouncer's transaction pooling, set it to
	// describe_exec or simple_protocol (docs/operations.md).
	conn, err := pgx.ParseConfig(cfg.DatabaseURL)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("open database: %w", err)
	}
	if cfg.RoundTrips != nil {
		conn.Tracer = cfg.RoundTrips
	}
	watchDetachedReads(conn) // its tracer wraps RoundTrips
	db := openPool(conn)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, nil, nil, fmt.Errorf("database unreachable: %w", err)
	}
	if _, err := sizePool(ctx, db, cfg.MaxOpenConns); err != nil {
		db.Close()
		return nil, nil, nil, err
	}
	hook := unavailable(o)
	if cfg.RoundTripHook != nil {
		hook = dbhook.Chain(cfg.RoundTripHook, hook)
	}
	if cfg.TracerProvider != nil {
		hook = dbhook.Chain(tracing.Hook(cfg.TracerProvider), hook)
	}
	// ent on the pool, or on one connection of it (a store's write).
	open := func(d dialect.Driver) *ent.Client {
		d = reportUnavailable(d, o)
		if cfg.RoundTripHook != nil {
			d = dbhook.Wrap(d, cfg.RoundTripHook)
		}
		if cfg.WrapDriver != nil {
			d = cfg.WrapDriver(d)
		}
		if cfg.TracerProvider != nil {
			d = tracing.Driver(d, cfg.TracerProvider)
		}
		client := ent.NewClient(ent.Driver(d))
		access.Confine(client)
		return client
	}
	return db, open(entsql.OpenDB(dialect.Postgres, db)), []store.Option{store.OnConnection(open), store.Exchanges(hook)}, nil
}

// openPool opens a pool of pgx's stdlib driver on conn, which sends UUIDs
// as ent expects.
func openPool(conn *pgx.ConnConfig) *sql.DB {
	db := stdlib.OpenDB(*conn, stdlib.OptionAfterConnect(func(_ context.Context, c *pgx.Conn) error {
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

// pgxOnly are the URL parameters pgx reads and removes before it connects.
var pgxOnly = []string{"default_query_exec_mode", "statement_cache_capacity", "description_cache_capacity"}

// forLibPQ is dsn without pgx's own parameters, for the migrations and
// the event hub's listener (lib/pq), which would send them to PostgreSQL
// as settings it does not know.
func forLibPQ(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		return dsn
	}
	q := u.Query()
	for _, k := range pgxOnly {
		q.Del(k)
	}
	u.RawQuery = q.Encode()
	return u.String()
}
