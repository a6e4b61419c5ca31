package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"time"

	"github.com/google/uuid"
	"github.com/lib/pq"

	"sessiongraph/ent"
	"sessiongraph/internal/access"
	"sessiongraph/internal/app"
	"sessiongraph/internal/config"
	"sessiongraph/internal/engine"
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

// seedSessionGraph writes the nested page's sessions as apitest.SessionGraph
// does (opened by the engine, then turns and refs in bulk, a second apart),
// and ANALYZEs them as autovacuum would.
func seedSessionGraph(ctx context.Context, a *app.App) error {
	ctx = access.System(ctx)
	start := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	for i := range pageSessions {
		user := fmt.Sprintf("user-%d", i%7)
		opened, err := a.Engine.Sessions.OpenSession(ctx, engine.OpenSessionInput{Tenant: pageTenant, ExternalKey: fmt.Sprintf("%s-chat-%03d", pageTenant, i), UserID: &user})
		if err != nil {
			return err
		}
		id := opened.Session.ID
		created := start.Add(time.Duration(i) * time.Second)
		if _, err := a.DB.ExecContext(ctx, `UPDATE sessions SET created_at = $1, last_active_at = $2, current_turn = $3 WHERE id = $4`,
			created, created.Add(pageTurns*time.Minute), pageTurns, id); err != nil {
			return err
		}
		turns := make([]*ent.TurnCreate, pageTurns)
		for n := range turns {
			at := created.Add(time.Duration(n) * time.Minute)
			turns[n] = a.Client.Turn.Create().SetSessionID(id).SetNumber(n + 1).
				SetUserMessage(fmt.Sprintf("Turn %d: leeks for dinner?", n+1)).SetUserTokens(10).
				SetAssistantMessage("Leek and potato soup.").SetAssistantTokens(5).
				SetStatus("COMPLETED").SetStartedAt(at).SetCompletedAt(at.Add(2 * time.Second))
		}
		if err := a.Client.Turn.CreateBulk(turns...).Exec(ctx); err != nil {
			return err
		}
		refs := make([]*ent.RefCreate, pageRefs)
		for j := range refs {
			turn := j*pageTurns/pageRefs + 1
			refs[j] = a.Client.Ref.Create().SetSessionID(id).SetRef(fmt.Sprintf("recipe_%d", j+1)).SetEntityType("recipe").
				SetEntityID(uuid.New()).SetLabel(fmt.Sprintf("Recipe %d", j+1)).SetAction("read").
				SetTurnCreated(turn).SetTurnLastReferenced(turn)
		}
		if err := a.Client.Ref.CreateBulk(refs...).Exec(ctx); err != nil {
			return err
		}
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
