package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/lib/pq"

	"sessiongraph/internal/app"
	"sessiongraph/internal/config"
	"sessiongraph/internal/devdb"
)

// loadDatabase is dropped and created afresh by every run, so runs compare;
// LOAD_DATABASE names another, for runs side by side on one PostgreSQL.
var loadDatabase = envOr("LOAD_DATABASE", "sessiongraph_load")

// loadTenant owns every session the load opens.
const loadTenant = "load"

// loadDB is the run's own database on the embedded default PostgreSQL (or
// the server at -database-url).
type loadDB struct {
	DSN     string
	release func()
}

// openLoadDB finds or starts PostgreSQL as the server binary does, then
// drops and creates the run's database.
func openLoadDB(ctx context.Context, adminURL, dataDir string, log *slog.Logger) (*loadDB, error) {
	release := func() {}
	if adminURL == "" {
		cluster, err := devdb.Ensure(ctx, devdb.Options{DataDir: dataDir, Database: "postgres", Logger: log, LocalServer: true})
		if err != nil {
			return nil, err
		}
		adminURL = cluster.AdminDSN
		release = func() {
			if err := cluster.Stop(context.Background()); err != nil {
				log.Error("stopping private PostgreSQL", "error", err)
			}
		}
	}
	dsn, err := withDatabase(adminURL, loadDatabase)
	if err != nil {
		release()
		return nil, err
	}
	admin, err := sql.Open("postgres", adminURL)
	if err != nil {
		release()
		return nil, err
	}
	defer admin.Close()
	name := pq.QuoteIdentifier(loadDatabase)
	for _, stmt := range []string{"DROP DATABASE IF EXISTS " + name + " WITH (FORCE)", "CREATE DATABASE " + name} {
		if _, err := admin.ExecContext(ctx, stmt); err != nil {
			release()
			return nil, fmt.Errorf("%s: %w", stmt, err)
		}
	}
	return &loadDB{DSN: dsn, release: release}, nil
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

// loadServer is sessiongraph served in this process on a loopback port.
// Each request names its operation (opHeader); the server side counts the
// statements ent sends for it and labels its goroutines with it, so that CPU
// profile samples can be attributed to it.
type loadServer struct {
	URL        string
	App        *app.App
	srv        *http.Server
	background statementTally // statements sent outside any request

	mu      sync.Mutex
	tallies map[string]*statementTally
	showSQL map[string]bool // operations whose next request prints its SQL (-show-sql)
}

// startServer assembles the app on dsn and serves it on 127.0.0.1. Every
// goroutine of the server, the event hub and reaper included, carries the
// profile label side=server; requests add op=<operation>.
func startServer(ctx context.Context, dsn string, showSQL []string, wholeReplica bool) (*loadServer, error) {
	s := &loadServer{tallies: map[string]*statementTally{}, showSQL: map[string]bool{}}
	for _, op := range showSQL {
		s.showSQL[op] = true
	}
	var err error
	pprof.Do(ctx, pprof.Labels("side", "server"), func(ctx context.Context) {
		err = s.start(ctx, dsn, wholeReplica)
	})
	return s, err
}

func (s *loadServer) start(ctx context.Context, dsn string, wholeReplica bool) error {
	cfg := app.Config{
		Settings: config.Defaults(),
		// Logged as in production (JSON, info), but not shown.
		Logger: slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo})),
	}
	countStatements(&cfg, &s.background)
	cfg.DatabaseURL = dsn
	if wholeReplica {
		// One key, the replica's limits: what the key may not take from
		// other keys there are none to take from.
		f := &cfg.Settings.Fairness
		f.KeyRate, f.KeyBurst, f.TenantRate, f.TenantBurst = 1_000_000, 1_000_000, 1_000_000, 1_000_000
		f.KeyInFlight, f.TenantInFlight = 1_000, 1_000
		f.KeyPoolShare, f.TenantPoolShare = 100, 100
		f.Operations, f.KeyOperations = 64, 64
	}
	a, err := app.New(ctx, cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		a.Close()
		return err
	}
	s.App = a
	s.URL = "http://" + ln.Addr().String()
	s.srv = &http.Server{Handler: s.attribute(a.Handler()), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("load server stopped", "error", err)
		}
	}()
	return nil
}

// attribute runs each request with its operation's statement tally in the
// context and its name as the profile label op. pprof.Do takes the labels
// of the context, not of the goroutine, and net/http's request context has
// none, so side=server is set again.
func (s *loadServer) attribute(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		op := r.Header.Get(opHeader)
		if op == "" {
			next.ServeHTTP(w, r)
			return
		}
		ctx := withTally(r.Context(), s.tally(op))
		if s.takeShowSQL(op) {
			fmt.Fprintf(os.Stderr, "SQL of one %s request:\n", op)
			ctx = withShownSQL(ctx, os.Stderr)
		}
		pprof.Do(ctx, pprof.Labels("side", "server", "op", op), func(ctx context.Context) {
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	})
}

func (s *loadServer) tally(op string) *statementTally {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tallies[op]
	if !ok {
		t = &statementTally{}
		s.tallies[op] = t
	}
	return t
}

// takeShowSQL reports whether this request of op is to print its SQL: the
// first one after -show-sql named it.
func (s *loadServer) takeShowSQL(op string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	show := s.showSQL[op]
	delete(s.showSQL, op)
	return show
}

// dbUse is a statement tally's counts at one moment, or between two.
type dbUse struct {
	statements int64
	wait       time.Duration
}

func (u dbUse) minus(v dbUse) dbUse {
	return dbUse{statements: u.statements - v.statements, wait: u.wait - v.wait}
}

// dbUse returns the statements counted so far, by operation.
func (s *loadServer) dbUse() map[string]dbUse {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]dbUse, len(s.tallies))
	for op, t := range s.tallies {
		out[op] = dbUse{statements: t.n.Load(), wait: time.Duration(t.wait.Load())}
	}
	return out
}

// close stops serving and closes the app.
func (s *loadServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
	s.App.Close()
}

// adminKey creates the ADMIN key that every load request carries.
func (s *loadServer) adminKey(ctx context.Context) (string, error) {
	return s.App.CreateAPIKey(ctx, "loadgen", "ADMIN", "")
}
