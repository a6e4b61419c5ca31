package graph_test

import (
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/testdb"
	"sessiongraph/migrations"
)

// cutProxy forwards TCP connections to PostgreSQL until it is cut: then it
// drops every connection and refuses new ones, as a database that went
// down does, until it is mended.
type cutProxy struct {
	t      *testing.T
	target string
	ln     net.Listener
	mu     sync.Mutex
	cut    bool
	conns  []net.Conn
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &cutProxy{t: t, target: target, ln: ln}
	t.Cleanup(func() { ln.Close(); p.setCut(true) })
	go p.serve()
	return p
}

func (p *cutProxy) serve() {
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
		up, err := net.Dial("tcp", p.target)
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

func (p *cutProxy) setCut(cut bool) {
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

// post sends an operation and returns the HTTP status, the Retry-After
// header and the error codes.
func post(t *testing.T, s *apitest.Server, query string, vars map[string]any) (int, string, []string) {
	t.Helper()
	res := s.Do(t, query, vars)
	var codes []string
	for _, e := range res.Errors {
		codes = append(codes, e.Code())
	}
	return res.Status, res.Header.Get("Retry-After"), codes
}

// With the database down, reads and writes answer UNAVAILABLE, and over
// HTTP 503 with Retry-After: a client can tell an outage from a bug (they
// answered INTERNAL). Once the database is back, the same write commits.
func TestWritesWhileTheDatabaseIsDownAreRetryable(t *testing.T) {
	dsn := testdb.New(t, migrations.Apply, migrations.Fingerprint())
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	proxy := newCutProxy(t, u.Host)
	u.Host = proxy.ln.Addr().String()
	s := apitest.Replica(t, u.String())
	a := newAgent(t, s, "outage")
	update := `mutation($id: ID!) { updateSession(input: {id: $id, historySummary: "kept"}) { session { historySummary } } }`
	read := `query($id: ID!) { session(id: $id) { id historySummary } }`
	ids := map[string]any{"id": a.id}

	proxy.setCut(true)
	for _, op := range []string{update, read, openSession} {
		vars := ids
		if op == openSession {
			vars = map[string]any{"in": map[string]any{"tenant": "acme", "externalKey": "during-the-outage"}}
		}
		status, retryAfter, codes := post(t, s, op, vars)
		assert.Equal(t, http.StatusServiceUnavailable, status, op)
		assert.Equal(t, "1", retryAfter, op)
		assert.Equal(t, []string{"UNAVAILABLE"}, codes, op)
	}
	// A key the replica has not seen cannot be checked either: 503, not 401.
	fresh := s.WithKey("sg_" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
	status, retryAfter, codes := post(t, fresh, read, ids)
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.Equal(t, "1", retryAfter)
	assert.Equal(t, []string{"UNAVAILABLE"}, codes)

	proxy.setCut(false)
	require.Eventually(t, func() bool {
		status, _, codes := post(t, s, update, ids)
		return status == http.StatusOK && len(codes) == 0
	}, 20*time.Second, 100*time.Millisecond, "the write commits once the database is back")
	var out struct {
		Session struct{ HistorySummary string } `json:"session"`
	}
	s.MustDo(t, read, ids, &out)
	assert.Equal(t, "kept", out.Session.HistorySummary)
}
