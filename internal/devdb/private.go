package devdb

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// maxSocketPath leaves room for "/.s.PGSQL.5432" within the ~107-byte limit
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

	c := &Cluster{dataDir: dataDir, owner: owner, log: opts.Logger, tcpPort: opts.TCPPort}
	if addr, ok := runningAt(ctx, dataDir); ok {
		opts.Logger.Info("reusing private PostgreSQL", "data_dir", dataDir, "socket_dir", addr.socketDir)
		return c, c.found(addr, opts.Database)
	}
	if c.bin, err = findBinaries(dataDir); err != nil {
		return nil, err
	}
	if err := c.initdb(ctx); err != nil {
		return nil, err
	}
	addr, err := c.start(ctx)
	if err != nil {
		return nil, err
	}
	c.Private = true
	return c, c.found(addr, opts.Database)
}

// found records the DSNs of the cluster at addr.
func (c *Cluster) found(addr address, database string) error {
	c.AdminDSN, c.DSN = adminDSN(addr), databaseDSN(addr, database)
	if c.tcpPort == 0 {
		return nil
	}
	password, err := os.ReadFile(c.dataDir + ".password")
	if err != nil {
		return fmt.Errorf("the cluster's TCP password: %w", err)
	}
	u, err := url.Parse(databaseDSN(address{port: c.tcpPort}, database))
	if err != nil {
		return err
	}
	u.User = url.UserPassword("postgres", strings.TrimSpace(string(password)))
	c.TCPDSN = u.String()
	return nil
}

// runningAt reads where the cluster in dataDir listens from its
// postmaster.pid (line 4 the port, line 5 the socket directory, line 6 the
// TCP address, empty for none) and confirms that the server there answers
// and really serves dataDir, so a stale file is not trusted. A cluster that
// an older version started on a TCP port is found the same way.
func runningAt(ctx context.Context, dataDir string) (address, bool) {
	pid, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return address{}, false
	}
	lines := strings.Split(string(pid), "\n")
	if len(lines) < 6 {
		return address{}, false
	}
	port, err := strconv.Atoi(strings.TrimSpace(lines[3]))
	if err != nil {
		return address{}, false
	}
	addr := address{socketDir: strings.TrimSpace(lines[4]), port: port}
	if addr.socketDir == "" && strings.TrimSpace(lines[5]) != "127.0.0.1" {
		return address{}, false
	}
	// A live postmaster may be slow to answer on a loaded machine (a burst
	// of CREATE DATABASE checkpoints under parallel test binaries took a
	// probe past its 2 s): while its process lives, ask again for up to
	// liveProbe rather than start a second server that cannot start.
	pidOf, _ := strconv.Atoi(strings.TrimSpace(lines[0]))
	deadline := time.Now().Add(liveProbe)
	for {
		served, err := queryString(ctx, adminDSN(addr), "SELECT current_setting('data_directory')")
		if err == nil {
			return addr, samePath(served, dataDir)
		}
		if !alive(pidOf) || time.Now().After(deadline) {
			return address{}, false
		}
		select {
		case <-ctx.Done():
			return address{}, false
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// alive reports whether a process with the pid exists (another user's
// included).
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// liveProbe is how long runningAt keeps asking a live postmaster.
const liveProbe = 30 * time.Second

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
	args := []string{"-D", c.dataDir, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C.UTF-8"}
	if c.tcpPort != 0 {
		pwfile := c.dataDir + ".password"
		if err := os.WriteFile(pwfile, []byte(rand.Text()+"\n"), 0o600); err != nil {
			return err
		}
		if err := c.owner.chown(pwfile); err != nil {
			return err
		}
		args = append(args, "--auth-host=scram-sha-256", "--pwfile="+pwfile)
	}
	out, err := c.bin.run(ctx, c.owner, "initdb", args...)
	if err != nil {
		return fmt.Errorf("initdb %s: %w: %s", c.dataDir, err, out)
	}
	return nil
}

// socketDir is where the cluster's Unix socket goes: beside the data when
// the path is short enough, else a directory of its own under /tmp named
// after the data directory, open to the cluster's owner only.
func (c *Cluster) socketDir() (string, error) {
	if len(c.dataDir) <= maxSocketPath && !strings.ContainsAny(c.dataDir, "'\\ ") {
		return c.dataDir, nil
	}
	sum := sha256.Sum256([]byte(c.dataDir))
	dir := filepath.Join("/tmp", "sessiongraph-socket-"+hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	return dir, c.owner.chown(dir)
}

// start runs pg_ctl start -w with no TCP listener, only the Unix socket,
// logging beside the data directory. The options go on the command line
// rather than in postgresql.conf so that clusters initialised by older
// versions, which listened on a loopback port, become private too.
func (c *Cluster) start(ctx context.Context) (address, error) {
	sockets, err := c.socketDir()
	if err != nil {
		return address{}, err
	}
	logFile := c.dataDir + ".log"
	f, err := os.OpenFile(logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return address{}, err
	}
	f.Close()
	if err := c.owner.chown(logFile); err != nil {
		return address{}, err
	}
	c.log.Info("starting private PostgreSQL", "data_dir", c.dataDir, "socket_dir", sockets, "log", logFile)
	// pg_ctl hands -o to a shell: the quotes keep an empty listen_addresses.
	port, listen := socketPort, ""
	if c.tcpPort != 0 {
		port, listen = c.tcpPort, "127.0.0.1"
	}
	serverOptions := fmt.Sprintf("-p %d -k '%s' -c listen_addresses='%s' -c unix_socket_permissions=0700", port, sockets, listen)
	out, err := c.bin.run(ctx, c.owner, "pg_ctl", "start", "-w", "-t", "60",
		"-D", c.dataDir, "-l", logFile, "-o", serverOptions)
	if err != nil {
		return address{}, fmt.Errorf("pg_ctl start: %w: %s; %s ends: %s",
			err, strings.TrimSpace(string(out)), logFile, logTail(logFile))
	}
	return address{socketDir: sockets, port: port}, nil
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
