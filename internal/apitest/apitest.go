// Package apitest runs sessiongraph for tests: a fresh database cloned from
// the migrated template, the real HTTP handler behind httptest, and a client
// that sends GraphQL operations the way any client does.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"sessiongraph/graph"
	"sessiongraph/internal/app"
	"sessiongraph/internal/config"
	"sessiongraph/internal/testdb"
	"sessiongraph/migrations"
)

// Server is a running sessiongraph on its own database.
type Server struct {
	*app.App
	URL string
	DSN string
	// AdminKey is an ADMIN API key, made at start. Requests send Key, which
	// is AdminKey unless WithKey chose another.
	AdminKey string
	Key      string

	statements *atomic.Int64
}

// WithKey returns the same server, sending key with every request instead
// ("" sends no key at all).
func (s *Server) WithKey(key string) *Server {
	c := *s
	c.Key = key
	return &c
}

// NewKey creates an API key of role (ADMIN, CLIENT or READER) in tenant.
func (s *Server) NewKey(t testing.TB, role, tenant string) string {
	t.Helper()
	key, err := s.CreateAPIKey(context.Background(), role+" key for "+t.Name(), role, tenant)
	require.NoError(t, err)
	return key
}

// New starts a server on a fresh database. configure may adjust the config.
func New(t testing.TB, configure ...func(*app.Config)) *Server {
	t.Helper()
	return Replica(t, testdb.New(t, migrations.Apply, migrations.Fingerprint()), configure...)
}

// Replica starts another server on the database at dsn, as a second
// replica behind a load balancer would run.
func Replica(t testing.TB, dsn string, configure ...func(*app.Config)) *Server {
	t.Helper()
	s := &Server{DSN: dsn, statements: new(atomic.Int64)}
	cfg := app.Config{
		Settings: config.Defaults(),
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	countRoundTrips(&cfg, s.statements)
	cfg.DatabaseURL = s.DSN
	// Tests of everything else send as fast as they can with one key; the
	// fairness tests set the limits they are about.
	cfg.Fairness = config.Fairness{KeyRate: 1 << 20, KeyBurst: 1 << 20, KeyInFlight: 1 << 20,
		TenantRate: 1 << 20, TenantBurst: 1 << 20, TenantInFlight: 1 << 20, KeyPoolShare: 50, TenantPoolShare: 75,
		Operations: 1 << 20, KeyOperations: 1 << 20}
	for _, f := range configure {
		f(&cfg)
	}
	a, err := app.New(context.Background(), cfg)
	require.NoError(t, err)
	s.App = a
	// Statement counts assume cached keys: wait until the key cache has
	// subscribed to revocations (a moment after start).
	require.Eventually(t, a.Keys.Caching, 10*time.Second, 5*time.Millisecond, "the API key cache never subscribed")
	s.AdminKey, err = a.CreateAPIKey(context.Background(), "apitest admin", "ADMIN", "")
	require.NoError(t, err)
	s.Key = s.AdminKey
	hs := httptest.NewUnstartedServer(a.Handler())
	hs.Config.ConnContext = graph.ConnContext // as server.go serves
	hs.Start()
	s.URL = hs.URL
	t.Cleanup(func() {
		hs.Close()
		a.Close()
	})
	return s
}

// AuthStatements is what an HTTP request costs before its operation runs
// once its API key is cached, that is after the key's first request on the
// server: nothing (the first costs the lookup, and a lastUsedAt write at
// most once a minute).
const AuthStatements = 0

// Statements returns how many round trips (statements, BEGIN, COMMIT) the
// ent driver has issued so far.
func (s *Server) Statements() int64 { return s.statements.Load() }

// client bounds every request, so that a server that hangs fails the test
// instead of the whole run.
var client = &http.Client{Timeout: 30 * time.Second}

// Response is a GraphQL response.
type Response struct {
	Status int
	Header http.Header     `json:"-"`
	Data   json.RawMessage `json:"data"`
	Errors []Error         `json:"errors"`
	// Body is the response's body, byte for byte.
	Body []byte `json:"-"`
}

// Error is one GraphQL error.
type Error struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

// Code returns the error's extensions.code.
func (e Error) Code() string {
	c, _ := e.Extensions["code"].(string)
	return c
}

// Do posts an operation and returns the response, whatever it holds.
func (s *Server) Do(t testing.TB, query string, vars map[string]any) *Response {
	t.Helper()
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, s.URL+"/graphql", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	return s.send(t, req)
}

// Get sends an operation as a GET request.
func (s *Server) Get(t testing.TB, query string) *Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.URL+"/graphql?query="+url.QueryEscape(query), nil)
	require.NoError(t, err)
	return s.send(t, req)
}

// Authorize sets the request's Authorization header to the server's Key.
func (s *Server) Authorize(req *http.Request) {
	if s.Key != "" {
		req.Header.Set("Authorization", "Bearer "+s.Key)
	}
}

func (s *Server) send(t testing.TB, req *http.Request) *Response {
	t.Helper()
	s.Authorize(req)
	res, err := client.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	out := &Response{Status: res.StatusCode, Header: res.Header, Body: raw}
	require.NoError(t, json.Unmarshal(raw, out), "response body: %s", raw)
	return out
}

// MustDo posts an operation, requires that it succeeded, and decodes its data
// into out (when out is not nil).
func (s *Server) MustDo(t testing.TB, query string, vars map[string]any, out any) {
	t.Helper()
	res := s.Do(t, query, vars)
	require.Empty(t, res.Errors, "operation failed")
	if out != nil {
		require.NoError(t, json.Unmarshal(res.Data, out))
	}
}

// ErrorCode posts an operation that must fail and returns its one error code.
func (s *Server) ErrorCode(t testing.TB, query string, vars map[string]any) string {
	t.Helper()
	res := s.Do(t, query, vars)
	require.Len(t, res.Errors, 1, "want exactly one error, data: %s", res.Data)
	return res.Errors[0].Code()
}
