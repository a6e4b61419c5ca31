package testdb

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// Transport is how a client reaches PostgreSQL: the two a DATABASE_URL can name.
type Transport string

const (
	// TCP is a loopback port (postgres://user@127.0.0.1:port/db).
	TCP Transport = "tcp"
	// Unix is a socket in a directory (postgres://user@/db?host=/dir&port=n).
	Unix Transport = "unix"
)

// Transports are both, for tests that run once over each.
var Transports = []Transport{TCP, Unix}

// Proxy forwards connections to the PostgreSQL of a DSN, presenting it over
// the transport of the test's choosing whatever DATABASE_URL names, until it
// is cut: then it drops every connection and refuses new ones, as a
// database that went down does, until it is mended.
type Proxy struct {
	// DSN reaches the database through the proxy.
	DSN string

	ln         net.Listener
	targetNet  string // "tcp" or "unix"
	targetAddr string

	mu    sync.Mutex
	cut   bool
	conns []net.Conn
}

// NewProxy starts a proxy to dsn's server, listening over transport, and
// stops it when the test ends.
func NewProxy(t testing.TB, dsn string, transport Transport) *Proxy {
	t.Helper()
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		t.Fatalf("testdb: proxy: parse %s: %v", redact(dsn), err)
	}
	p := &Proxy{targetNet: "tcp", targetAddr: net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))}
	if strings.HasPrefix(cfg.Host, "/") {
		p.targetNet, p.targetAddr = "unix", socketPath(cfg.Host, int(cfg.Port))
	}
	switch transport {
	case TCP:
		p.ln, err = net.Listen("tcp", "127.0.0.1:0")
		if err == nil {
			p.DSN, err = rehost(dsn, p.ln.Addr().String(), "", 0)
		}
		if err == nil && p.targetNet == "unix" && !hasSSLMode(dsn) {
			// lib/pq asks for TLS over TCP unless told otherwise; behind the
			// proxy is a socket, where the server offers none.
			p.DSN, err = withSetting(p.DSN, "sslmode", "disable")
		}
	case Unix:
		// Socket paths are limited to ~107 bytes: t.TempDir can be longer.
		var dir string
		if dir, err = os.MkdirTemp("", "sg-sock-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			const port = 5432
			if p.ln, err = net.Listen("unix", socketPath(dir, port)); err == nil {
				p.DSN, err = rehost(dsn, "", dir, port)
			}
		}
	default:
		err = fmt.Errorf("unknown transport %q", transport)
	}
	if err != nil {
		t.Fatalf("testdb: proxy over %s: %v", transport, err)
	}
	t.Cleanup(func() { p.ln.Close(); p.Cut() })
	go p.serve()
	return p
}

// socketPath is where PostgreSQL puts the socket for port in dir.
func socketPath(dir string, port int) string {
	return filepath.Join(dir, ".s.PGSQL."+strconv.Itoa(port))
}

// rehost points dsn at a TCP address (hostPort) or a socket directory,
// keeping its user, password, database and other settings.
func rehost(dsn, hostPort, socketDir string, port int) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		// Key=value DSNs: a later setting wins.
		if hostPort != "" {
			host, p, _ := net.SplitHostPort(hostPort)
			return fmt.Sprintf("%s host=%s port=%s", dsn, host, p), nil
		}
		return fmt.Sprintf("%s host=%s port=%d", dsn, socketDir, port), nil
	}
	q := u.Query()
	q.Del("host")
	q.Del("port")
	if hostPort != "" {
		u.Host = hostPort
	} else {
		u.Host = ""
		q.Set("host", socketDir)
		q.Set("port", strconv.Itoa(port))
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func hasSSLMode(dsn string) bool {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		return u.Query().Has("sslmode")
	}
	return strings.Contains(dsn, "sslmode=")
}

// withSetting adds a connection setting to dsn.
func withSetting(dsn, key, value string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return dsn + " " + key + "=" + value, nil
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func (p *Proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.cut {
			p.mu.Unlock()
			c.Close()
			continue
		}
		up, err := net.Dial(p.targetNet, p.targetAddr)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		go func() { _, _ = io.Copy(up, c); up.Close() }()
		go func() { _, _ = io.Copy(c, up); c.Close() }()
	}
}

// Cut drops every connection and refuses new ones.
func (p *Proxy) Cut() { p.setCut(true) }

// Mend accepts connections again.
func (p *Proxy) Mend() { p.setCut(false) }

func (p *Proxy) setCut(cut bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = cut
	if cut {
		for _, c := range p.conns {
			c.Close()
		}
		p.conns = nil
	}
}
