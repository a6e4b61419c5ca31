// Package devdb finds or starts the PostgreSQL that a developer's server and
// tests talk to, so that nothing has to be set up by hand on a fresh machine.
//
// The development database (`sessiongraph -dev`, which `make run` uses)
// belongs to its checkout: a private cluster initialised under
// Options.DataDir and listening only on a Unix socket beside its data, with
// no TCP port. No other checkout, user or process can reach it by accident,
// two checkouts never share one, and deleting .data resets it. PostgreSQL
// records the socket in DataDir/postmaster.pid, which is how a later process
// of the same checkout finds and reuses it.
//
// Tests, which clone a fresh database of their own per test, may instead use
// a server already answering on 127.0.0.1:5432 (Options.LocalServer).
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

// socketPort names a private cluster's socket (.s.PGSQL.5432). Only the
// name: the socket sits in a directory of the cluster's own.
const socketPort = 5432

// Options says where a private cluster lives and which database the server wants.
type Options struct {
	DataDir  string       // default ".data/postgres"
	Database string       // default "sessiongraph"; created if missing
	Logger   *slog.Logger // may be nil

	// LocalServer uses a PostgreSQL on 127.0.0.1:5432 when connecting to it
	// as user postgres, without a password unless PGPASSWORD or ~/.pgpass
	// gives one, actually succeeds within a few seconds, instead of the
	// private cluster; a server there that asks for a password we lack (as
	// Debian's own cluster does over TCP) or never answers is passed over.
	// Only for callers that make databases of their own on it (tests, the
	// load generator): another process may be using that server.
	LocalServer bool

	// TCPPort, when not 0, makes a private cluster listen on
	// 127.0.0.1:TCPPort too, where it asks for the password in
	// DataDir+".password" (written at initdb; user postgres), as a
	// production server does; the Unix socket stays trusted. Cluster.TCPDSN
	// reaches it there. For `make test-transports`; set it before the
	// cluster is first initialised.
	TCPPort int
}

// Cluster is a reachable PostgreSQL and, when we started it, the means to stop it.
type Cluster struct {
	DSN      string // lib/pq URL to Options.Database, sslmode=disable
	AdminDSN string // same server, database "postgres" (for CREATE DATABASE)
	TCPDSN   string // Options.Database over TCP with its password; set with Options.TCPPort
	Private  bool   // true when this process started the cluster

	dataDir string   // private cluster's data directory; empty for the shared server
	bin     binaries // where pg_ctl lives; set when Private
	owner   *osUser  // who runs pg_ctl; nil means the current user
	tcpPort int      // Options.TCPPort
	log     *slog.Logger
}

// Ensure returns a reachable PostgreSQL holding opts.Database: the private
// cluster under opts.DataDir, started if it is not running (or, with
// opts.LocalServer, the server on 127.0.0.1:5432 when one answers).
func Ensure(ctx context.Context, opts Options) (*Cluster, error) {
	opts = opts.withDefaults()
	var c *Cluster
	if opts.LocalServer && answers(ctx, adminDSN(localServer)) {
		opts.Logger.Info("using PostgreSQL on 127.0.0.1:5432")
		c = &Cluster{AdminDSN: adminDSN(localServer), log: opts.Logger}
		c.DSN = databaseDSN(localServer, opts.Database)
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

// address is where a server listens: a loopback TCP port, or a Unix socket
// directory (with the port that names the socket in it).
type address struct {
	socketDir string // empty for TCP on 127.0.0.1
	port      int
}

// localServer is the system-wide PostgreSQL's usual address.
var localServer = address{port: 5432}

// adminDSN is the maintenance database at addr; it always exists.
func adminDSN(addr address) string { return databaseDSN(addr, "postgres") }

// databaseDSN is a URL both lib/pq and pgx read; a socket directory goes in
// the host parameter, which both take for a Unix socket.
func databaseDSN(addr address, database string) string {
	u := url.URL{Scheme: "postgres", User: url.User("postgres"), Path: "/" + database}
	q := url.Values{"sslmode": {"disable"}}
	if addr.socketDir != "" {
		q.Set("host", addr.socketDir)
		q.Set("port", strconv.Itoa(addr.port))
	} else {
		u.Host = "127.0.0.1:" + strconv.Itoa(addr.port)
	}
	u.RawQuery = q.Encode()
	return u.String()
}
