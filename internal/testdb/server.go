package testdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"

	_ "github.com/lib/pq" // registers the "postgres" driver
	"sessiongraph/internal/devdb"
)

// server is the PostgreSQL that holds templates and test databases, shared by
// every test in this process.
type server struct {
	adminDSN string  // database "postgres": CREATE and DROP DATABASE run from here
	admin    *sql.DB // pool on adminDSN, kept for the life of the test binary

	// citus is the cluster's workers when the tests run on Citus
	// (CitusEnv), else nil.
	citus *cluster

	mu        sync.Mutex
	templates map[string]func() (string, error) // fingerprint -> template name, made once
}

// shared finds the server once per test binary: DATABASE_URL when set, else
// a server on 127.0.0.1:5432 when connecting to it as postgres succeeds
// (never one that asks for a password we lack), else the checkout's private
// cluster under .data/postgres, so `go test ./...` works on a fresh machine.
// A private cluster started here is left running for the next package and
// the next run; devdb finds and reuses it.
var shared = sync.OnceValues(func() (*server, error) {
	dsn, err := serverDSN()
	if err != nil {
		return nil, err
	}
	admin, err := sql.Open("postgres", dsn)
	if err != nil {
		return nil, err
	}
	if err := admin.PingContext(context.Background()); err != nil {
		admin.Close()
		return nil, fmt.Errorf("connect %s: %w", redact(dsn), err)
	}
	srv := &server{adminDSN: dsn, admin: admin, templates: map[string]func() (string, error){}}
	if Citus() {
		if srv.citus, err = citusCluster(context.Background(), admin, dsn); err != nil {
			admin.Close()
			return nil, err
		}
	}
	srv.dropLeftovers(context.Background())
	return srv, nil
})

// serverDSN is an admin DSN (database "postgres") on the server tests use.
func serverDSN() (string, error) {
	if env := os.Getenv(CitusEnv); env != "" {
		return withDatabase(env, "postgres"), nil
	}
	if env := os.Getenv("DATABASE_URL"); env != "" {
		return withDatabase(env, "postgres"), nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	c, err := devdb.Ensure(context.Background(), devdb.Options{
		DataDir:  filepath.Join(root, ".data", "postgres"),
		Database: "postgres",
		// Every test clones a database of its own, so a server other
		// processes use is safe and saves starting a cluster.
		LocalServer: true,
	})
	if err != nil {
		return "", err
	}
	return c.AdminDSN, nil
}

// repoRoot walks up from the working directory (a package dir under go test)
// to the directory holding go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory; set DATABASE_URL")
		}
		dir = parent
	}
}

// withDatabase points a postgres:// URL at another database on the same server.
func withDatabase(dsn, database string) string {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		// Key=value DSNs: a later dbname setting wins in lib/pq.
		return dsn + " dbname=" + database
	}
	u.Path = "/" + database
	return u.String()
}

// redact hides a password so DSNs can appear in test failures.
func redact(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.Scheme != "" {
		return u.Redacted()
	}
	return "the DSN in DATABASE_URL"
}
