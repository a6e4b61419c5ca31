// Package devdb finds or starts the PostgreSQL that a developer's server and
// tests talk to, so that nothing has to be set up by hand on a fresh machine.
//
// A server already answering on 127.0.0.1:5432 (user postgres, trust auth) is
// used as is. Otherwise a private cluster is initialised under Options.DataDir
// and started on a free loopback port; PostgreSQL itself records that port in
// DataDir/postmaster.pid, which is how a later process finds and reuses it.
package devdb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strconv"
)

// ErrNoPostgres means neither a running server nor PostgreSQL binaries were found.
var ErrNoPostgres = errors.New("no PostgreSQL found: install it (apt-get install postgresql) or set DATABASE_URL")

// sharedPort is where a system-wide PostgreSQL usually listens.
const sharedPort = 5432

// Options says where a private cluster lives and which database the server wants.
type Options struct {
	DataDir  string       // default ".data/postgres"
	Database string       // default "sessiongraph"; created if missing
	Logger   *slog.Logger // may be nil

	// SkipShared ignores a server on 127.0.0.1:5432 and always uses a private
	// cluster; tests use it to exercise the path a fresh CI machine takes.
	SkipShared bool
}

// Cluster is a reachable PostgreSQL and, when we started it, the means to stop it.
type Cluster struct {
	DSN      string // lib/pq URL to Options.Database, sslmode=disable
	AdminDSN string // same server, database "postgres" (for CREATE DATABASE)
	Private  bool   // true when this process started the cluster

	dataDir string   // private cluster's data directory; empty for the shared server
	bin     binaries // where pg_ctl lives; set when Private
	owner   *osUser  // who runs pg_ctl; nil means the current user
	log     *slog.Logger
}

// Ensure returns a reachable PostgreSQL holding opts.Database, starting a
// private cluster when no shared server answers.
func Ensure(ctx context.Context, opts Options) (*Cluster, error) {
	opts = opts.withDefaults()
	var c *Cluster
	if !opts.SkipShared && answers(ctx, adminDSN(sharedPort)) {
		opts.Logger.Info("using PostgreSQL on 127.0.0.1:5432")
		c = &Cluster{AdminDSN: adminDSN(sharedPort), log: opts.Logger}
		c.DSN = databaseDSN(sharedPort, opts.Database)
	} else {
		var err error
		if c, err = ensurePrivate(ctx, opts); err != nil {
			return nil, err
		}
	}
	if err := createDatabase(ctx, c.AdminDSN, opts.Database); err != nil {
		return nil, err
	}
	return c, nil
}

// Stop stops only a cluster this process started (pg_ctl stop -m fast); no-op otherwise.
func (c *Cluster) Stop(ctx context.Context) error {
	if !c.Private {
		return nil
	}
	c.log.Info("stopping private PostgreSQL", "data_dir", c.dataDir)
	if out, err := c.bin.run(ctx, c.owner, "pg_ctl", "stop", "-D", c.dataDir, "-m", "fast", "-w"); err != nil {
		return fmt.Errorf("pg_ctl stop: %w: %s", err, out)
	}
	c.Private = false // a second Stop must not touch a cluster someone else may have started since
	return nil
}

// Restart restarts a cluster this process started, on the same port
// (pg_ctl restart keeps the options it was started with); tests use it to
// prove that the server rides through a database restart.
func (c *Cluster) Restart(ctx context.Context) error {
	if !c.Private {
		return fmt.Errorf("restart: this process did not start the cluster")
	}
	// -l as at start: without it the new postmaster would inherit this
	// command's output pipes and the command would never finish.
	if out, err := c.bin.run(ctx, c.owner, "pg_ctl", "restart", "-D", c.dataDir, "-m", "fast", "-w", "-t", "60",
		"-l", c.dataDir+".log"); err != nil {
		return fmt.Errorf("pg_ctl restart: %w: %s", err, out)
	}
	return nil
}

func (o Options) withDefaults() Options {
	if o.DataDir == "" {
		o.DataDir = ".data/postgres"
	}
	if o.Database == "" {
		o.Database = "sessiongraph"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o
}

// adminDSN is the maintenance database on a loopback server; it always exists.
func adminDSN(port int) string { return databaseDSN(port, "postgres") }

func databaseDSN(port int, database string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User("postgres"),
		Host:     "127.0.0.1:" + strconv.Itoa(port),
		Path:     "/" + database,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}
