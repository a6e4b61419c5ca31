package devdb

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// preferredPort keeps a private cluster clear of a system server on 5432 while
// staying easy to remember for psql.
const preferredPort = 55432

// maxSocketPath leaves room for "/.s.PGSQL.NNNNN" within the ~107-byte limit
// on Unix socket paths.
const maxSocketPath = 90

// ensurePrivate reuses the cluster already running in opts.DataDir or starts
// one. A reused cluster is not Private: some other process started it and may
// still be using it, so our Stop must leave it alone.
func ensurePrivate(ctx context.Context, opts Options) (*Cluster, error) {
	owner, err := clusterOwner()
	if err != nil {
		return nil, err
	}
	dataDir, err := filepath.Abs(opts.DataDir)
	if err != nil {
		return nil, err
	}
	dataDir = reachableDataDir(dataDir, owner, opts.Logger)
	if err := os.MkdirAll(filepath.Dir(dataDir), 0o755); err != nil {
		return nil, err
	}
	// The lock keeps parallel test binaries from running initdb or pg_ctl start
	// on the same directory at once.
	unlock, err := lockFile(ctx, dataDir+".lock")
	if err != nil {
		return nil, err
	}
	defer unlock()

	c := &Cluster{dataDir: dataDir, owner: owner, log: opts.Logger}
	if port, ok := runningPort(ctx, dataDir); ok {
		opts.Logger.Info("reusing private PostgreSQL", "data_dir", dataDir, "port", port)
		c.AdminDSN, c.DSN = adminDSN(port), databaseDSN(port, opts.Database)
		return c, nil
	}
	if c.bin, err = findBinaries(dataDir); err != nil {
		return nil, err
	}
	if err := c.initdb(ctx); err != nil {
		return nil, err
	}
	port, err := c.startOnFreePort(ctx)
	if err != nil {
		return nil, err
	}
	c.Private = true
	c.AdminDSN, c.DSN = adminDSN(port), databaseDSN(port, opts.Database)
	return c, nil
}

// runningPort reads the port PostgreSQL recorded in postmaster.pid (line 4)
// and confirms that the server there answers and really serves dataDir, so a
// stale file whose port now belongs to another server is not trusted.
func runningPort(ctx context.Context, dataDir string) (int, bool) {
	pid, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return 0, false
	}
	lines := strings.Split(string(pid), "\n")
	if len(lines) < 4 {
		return 0, false
	}
	port, err := strconv.Atoi(strings.TrimSpace(lines[3]))
	if err != nil {
		return 0, false
	}
	served, err := queryString(ctx, adminDSN(port), "SELECT current_setting('data_directory')")
	return port, err == nil && samePath(served, dataDir)
}

func samePath(a, b string) bool {
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && ra == rb
}

// initdb creates the cluster once; a directory holding PG_VERSION is already done.
func (c *Cluster) initdb(ctx context.Context) error {
	if _, err := os.Stat(filepath.Join(c.dataDir, "PG_VERSION")); err == nil {
		return nil
	}
	c.log.Info("initialising private PostgreSQL", "data_dir", c.dataDir)
	if err := os.MkdirAll(c.dataDir, 0o700); err != nil {
		return err
	}
	if err := c.owner.chown(c.dataDir); err != nil {
		return err
	}
	// C.UTF-8 matches what Debian gives the system cluster, so sorting and
	// case folding behave the same on either path.
	out, err := c.bin.run(ctx, c.owner, "initdb", "-D", c.dataDir,
		"-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C.UTF-8")
	if err != nil {
		return fmt.Errorf("initdb %s: %w: %s", c.dataDir, err, out)
	}
	conf := fmt.Sprintf("\n# Added by sessiongraph devdb: loopback only.\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\n",
		socketDir(c.dataDir))
	return appendFile(filepath.Join(c.dataDir, "postgresql.conf"), conf)
}

// socketDir keeps the Unix socket beside the data when the path is short
// enough, else falls back to /tmp, which the postgres account can always write
// (the port in the socket's name keeps clusters apart).
func socketDir(dataDir string) string {
	if len(dataDir) <= maxSocketPath && !strings.ContainsAny(dataDir, "'\\") {
		return dataDir
	}
	return "/tmp"
}

// start runs pg_ctl start -w on port, logging beside the data directory.
func (c *Cluster) start(ctx context.Context, port int) error {
	logFile := c.dataDir + ".log"
	f, err := os.OpenFile(logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	f.Close()
	if err := c.owner.chown(logFile); err != nil {
		return err
	}
	c.log.Info("starting private PostgreSQL", "data_dir", c.dataDir, "port", port, "log", logFile)
	out, err := c.bin.run(ctx, c.owner, "pg_ctl", "start", "-w", "-t", "60",
		"-D", c.dataDir, "-l", logFile, "-o", "-p "+strconv.Itoa(port))
	if err != nil {
		return fmt.Errorf("pg_ctl start on port %d: %w: %s; %s ends: %s",
			port, err, strings.TrimSpace(string(out)), logFile, logTail(logFile))
	}
	return nil
}

// startAttempts covers losing a port to another cluster (say, a parallel test
// package with its own DataDir) between choosing it and binding it.
const startAttempts = 3

// startOnFreePort starts the cluster on preferredPort, or on any free port
// when that is taken, retrying on a fresh port if the server fails to start.
func (c *Cluster) startOnFreePort(ctx context.Context) (int, error) {
	var err error
	for attempt := range startAttempts {
		var port int
		if port, err = freePort(attempt == 0); err != nil {
			return 0, err
		}
		if err = c.start(ctx, port); err == nil {
			return port, nil
		}
		c.log.Warn("private PostgreSQL did not start", "port", port, "err", err)
	}
	return 0, err
}

// freePort returns a loopback port nothing listens on: preferredPort when
// asked for and free, else whatever the kernel hands out.
func freePort(preferred bool) (int, error) {
	addr := "127.0.0.1:0"
	if preferred {
		addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(preferredPort))
	}
	l, err := net.Listen("tcp", addr)
	if err != nil && preferred {
		l, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// lockFile takes an exclusive flock on path, polling so ctx can cancel the wait.
// The returned func releases it; the file itself stays, since removing it
// would let two processes lock different inodes.
func lockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// logTail is the last few lines of the server log, which say why a start failed.
func logTail(path string) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(lines[max(0, len(lines)-3):], " | ")
}

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// reachableDataDir is dataDir, or when the postgres account cannot reach it
// (root's checkout under /root is 0700) a stand-in under /tmp named after it,
// so every process asking for dataDir still finds the same cluster.
func reachableDataDir(dataDir string, owner *osUser, log *slog.Logger) string {
	parent := filepath.Dir(dataDir)
	if err := os.MkdirAll(parent, 0o755); err != nil || owner.canReach(parent) {
		return dataDir // a MkdirAll error resurfaces, with its reason, when we lock
	}
	sum := sha256.Sum256([]byte(dataDir))
	standIn := filepath.Join("/tmp", "sessiongraph-"+hex.EncodeToString(sum[:6]), filepath.Base(dataDir))
	log.Info("postgres account cannot reach data dir; using a stand-in", "data_dir", dataDir, "stand_in", standIn)
	return standIn
}
