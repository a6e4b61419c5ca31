package graph_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
	"sessiongraph/internal/testdb"
	"sessiongraph/migrations"
)

// logLines collects a JSON logger's lines, written from the server's
// goroutines.
type logLines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logLines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// records returns the lines logged so far, decoded.
func (l *logLines) records(t *testing.T) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(l.buf.Bytes()), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal(line, &m), "%s", line)
		out = append(out, m)
	}
	return out
}

// gate forwards connections to PostgreSQL, over TCP or its Unix socket,
// until it is closed: then it drops them all and refuses new ones, as a
// database that went down does, until it is opened again.
type gate struct {
	network, target string
	ln              net.Listener
	mu              sync.Mutex
	closed          bool
	conns           []net.Conn
}

// outageProxy returns a gate in front of the database at dsn (a postgres://
// URL) and the DSN that reaches the database through it.
func outageProxy(t *testing.T, dsn string) (*gate, string) {
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	g := &gate{network: "tcp", target: u.Host}
	q := u.Query()
	if dir := q.Get("host"); strings.HasPrefix(dir, "/") {
		port := q.Get("port")
		if port == "" {
			port = "5432"
		}
		g.network, g.target = "unix", dir+"/.s.PGSQL."+port
		q.Del("host")
		q.Del("port")
		u.RawQuery = q.Encode()
	}
	g.ln, err = net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { g.ln.Close(); g.set(true) })
	go g.serve()
	u.Host = g.ln.Addr().String()
	return g, u.String()
}

func (g *gate) serve() {
	for {
		c, err := g.ln.Accept()
		if err != nil {
			return
		}
		g.mu.Lock()
		var up net.Conn
		if !g.closed {
			up, err = net.Dial(g.network, g.target)
		}
		if up == nil || err != nil {
			g.mu.Unlock()
			c.Close()
			continue
		}
		g.conns = append(g.conns, c, up)
		g.mu.Unlock()
		go func() { _, _ = io.Copy(up, c); up.Close() }()
		go func() { _, _ = io.Copy(c, up); c.Close() }()
	}
}

// set closes the gate (dropping every connection) or opens it.
func (g *gate) set(closed bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = closed
	if closed {
		for _, c := range g.conns {
			c.Close()
		}
		g.conns = nil
	}
}

// An outage is logged when it begins and when it ends, not once per
// request it fails: 30 requests answered 503 during it leave one ERROR line.
func TestAnOutageIsLoggedOncePerStateChange(t *testing.T) {
	proxy, dsn := outageProxy(t, testdb.New(t, migrations.Apply, migrations.Fingerprint()))
	var logs logLines
	s := apitest.Replica(t, dsn, func(c *app.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
	a := newAgent(t, s, "outage-log")
	read := `query($id: ID!) { session(id: $id) { id } }`
	ids := map[string]any{"id": a.id}

	proxy.set(true)
	for range 30 {
		status, _, codes := post(t, s, read, ids)
		require.Equal(t, http.StatusServiceUnavailable, status)
		require.Equal(t, []string{"UNAVAILABLE"}, codes)
	}
	proxy.set(false)
	require.Eventually(t, func() bool {
		status, _, _ := post(t, s, read, ids)
		return status == http.StatusOK
	}, 20*time.Second, 50*time.Millisecond, "the database is back")

	var errorsLogged, back []string
	for _, r := range logs.records(t) {
		msg, _ := r["msg"].(string)
		switch {
		case r["level"] == "ERROR":
			errorsLogged = append(errorsLogged, msg)
		case msg == "the database is reachable again":
			back = append(back, msg)
		}
	}
	assert.Equal(t, []string{"the database is unreachable: requests answer UNAVAILABLE (HTTP 503) until it is back; " +
		"they are not logged one by one meanwhile"}, errorsLogged)
	assert.Len(t, back, 1)
}
