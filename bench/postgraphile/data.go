package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net/url"

	"github.com/lib/pq"

	"sessiongraph/internal/app"
	"sessiongraph/internal/config"
	"sessiongraph/internal/grown"
)

// dbPrefix starts the name of every database the comparison makes, so that
// they can be told apart from others on a shared PostgreSQL and dropped.
const dbPrefix = "pgcompare_"

// dataset is one data set loaded twice: sessiongraph's database, and a copy
// of it (CREATE DATABASE … TEMPLATE: the same rows, ids and statistics) that
// PostGraphile serves, so that neither server's activity shows in the other's
// pg_stat_database row.
type dataset struct {
	Name     string   // fresh or grown
	SG       string   // sessiongraph's database URL
	PG       []string // the copies' URLs: one per PostGraphile target
	sgName   string
	pgNames  []string
	AdminKey string // sessiongraph's ADMIN API key
}

// The nested page's data, as apitest.SessionGraph makes it for
// BenchmarkSessionGraphPage: 20 sessions of tenant acme, each with 10 turns
// and 20 refs.
const (
	pageSessions = 20
	pageTurns    = 10
	pageRefs     = 20
	pageTenant   = "acme"
)

// loadDataset makes the data set's two databases on the server at admin:
// migrated by sessiongraph's own start (app.New), the grown rows when asked
// (internal/grown, as apitest.NewGrown and make load -grown load them), then
// the nested page's sessions, then the copies (one for each PostGraphile
// target, so that each has its own pg_stat_database row).
func loadDataset(ctx context.Context, admin *sql.DB, adminURL, name string, copies int, log *slog.Logger) (*dataset, error) {
	d := &dataset{Name: name, sgName: dbPrefix + "sg_" + name}
	var err error
	if d.SG, err = withDatabase(adminURL, d.sgName); err != nil {
		return nil, err
	}
	for i := range copies {
		db := fmt.Sprintf("%spg5_%s_%d", dbPrefix, name, i+1)
		u, err := withDatabase(adminURL, db)
		if err != nil {
			return nil, err
		}
		d.pgNames, d.PG = append(d.pgNames, db), append(d.PG, u)
	}
	if err := d.drop(ctx, admin); err != nil {
		return nil, err
	}
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+pq.QuoteIdentifier(d.sgName)); err != nil {
		return nil, err
	}
	cfg := app.Config{Settings: config.Defaults(), NoReaper: true, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	cfg.DatabaseURL = d.SG
	a, err := app.New(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("sessiongraph on %s: %w", d.sgName, err)
	}
	err = func() error {
		defer a.Close()
		if name == "grown" {
			log.Info("loading the grown rows (internal/grown)", "database", d.sgName)
			if err := grown.Load(ctx, a.DB); err != nil {
				return err
			}
		}
		log.Info("seeding the nested page's sessions", "database", d.sgName, "sessions", pageSessions)
		if err := seedSessionGraph(ctx, a); err != nil {
			return err
		}
		d.AdminKey, err = a.CreateAPIKey(ctx, "pgcompare", "ADMIN", "")
		return err
	}()
	if err != nil {
		return nil, err
	}
	// A copy needs the source without connections; app.Close closed ours.
	for _, db := range d.pgNames {
		if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+pq.QuoteIdentifier(db)+" TEMPLATE "+pq.QuoteIdentifier(d.sgName)); err != nil {
			return nil, fmt.Errorf("copy %s: %w", d.sgName, err)
		}
	}
	return d, nil
}

// seedSessionGraph writes the nested page's sessions as the tests do
// (grown.SessionGraph) and ANALYZEs them as autovacuum would.
func seedSessionGraph(ctx context.Context, a *app.App) error {
	if _, err := grown.SessionGraph(ctx, a.Engine.Sessions, a.Client, a.DB, pageTenant, pageSessions, pageTurns, pageRefs); err != nil {
		return err
	}
	_, err := a.DB.ExecContext(ctx, `VACUUM ANALYZE sessions, turns, refs, artifacts`)
	return err
}

// dropDatabase drops a database of the comparison, closing its connections.
func dropDatabase(ctx context.Context, admin *sql.DB, name string) error {
	_, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+pq.QuoteIdentifier(name)+" WITH (FORCE)")
	return err
}

// drop drops the data set's databases.
func (d *dataset) drop(ctx context.Context, admin *sql.DB) error {
	for _, db := range append(d.pgNames, d.sgName) {
		if err := dropDatabase(ctx, admin, db); err != nil {
			return err
		}
	}
	return nil
}

// withDatabase returns a PostgreSQL URL with its database replaced.
func withDatabase(dsn, database string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("database URL: %w", err)
	}
	u.Path = "/" + database
	return u.String(), nil
}
