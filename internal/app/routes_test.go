package app_test

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// TestRoutes requests every route without an API key: the pages are
// public, the data behind /graphql is not.
func TestRoutes(t *testing.T) {
	s := apitest.New(t)
	res, err := http.Get(s.URL + "/graphql?query=%7B__typename%7D")
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "GraphQL needs a key")
	for _, c := range []struct {
		path, contains, contentType string
	}{
		{"/healthz", "ok", "text/plain"},
		{"/readyz", "ready", "text/plain"},
		{"/", "sessiongraph", "text/html"},
		{"/graphiql", "/graphiql/vendor/graphiql/graphiql.min.js", "text/html"},
		{"/graphiql/main.js", "/graphql", "text/javascript"},
	} {
		res, err := http.Get(s.URL + c.path)
		require.NoError(t, err)
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		assert.Equal(t, http.StatusOK, res.StatusCode, c.path)
		assert.Contains(t, string(body), c.contains, c.path)
		assert.True(t, strings.HasPrefix(res.Header.Get("Content-Type"), c.contentType), c.path)
		assert.Len(t, res.Header.Get("X-Request-Id"), 16, "every response carries its request id")
	}
}

func TestReadinessFailsWhenTheSchemaIsBehind(t *testing.T) {
	s := apitest.New(t)
	_, err := s.DB.Exec(`UPDATE schema_migrations SET version = version - 1`)
	require.NoError(t, err)
	res, err := http.Get(s.URL + "/readyz")
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, res.StatusCode)

	res, err = http.Get(s.URL + "/healthz")
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode, "the process is still up")
}

func TestQueriesOverGetButNotMutations(t *testing.T) {
	s := apitest.New(t)
	res := s.Get(t, `{ sessions(first: 1) { totalCount } }`)
	assert.Empty(t, res.Errors)
	assert.JSONEq(t, `{"sessions": {"totalCount": 0}}`, string(res.Data))

	res = s.Get(t, `mutation { openSession(input: {tenant: "t", externalKey: "k"}) { created } }`)
	require.Len(t, res.Errors, 1)
	assert.Contains(t, res.Errors[0].Message, "GET requests only allow query operations")
	var n int
	require.NoError(t, s.DB.QueryRow(`SELECT count(*) FROM sessions`).Scan(&n))
	assert.Zero(t, n)
}

func TestMetricsCountOperationsByNameAndOutcome(t *testing.T) {
	s := apitest.New(t)
	s.MustDo(t, `query ListSessions { sessions(first: 5) { totalCount } }`, nil, nil)
	s.MustDo(t, `query ListSessions { sessions(first: 5) { totalCount } }`, nil, nil)
	res := s.Do(t, `query FindOne { session(id: "00000000-0000-4000-8000-000000000000") { id } }`, nil)
	require.Len(t, res.Errors, 1)

	req, err := http.NewRequest(http.MethodGet, s.URL+"/metrics", nil)
	require.NoError(t, err)
	s.Authorize(req)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(body)
	for _, want := range []string{
		`sessiongraph_graphql_requests_total{operation="ListSessions",outcome="ok",type="query"} 2`,
		`sessiongraph_graphql_requests_total{operation="FindOne",outcome="NOT_FOUND",type="query"} 1`,
		`sessiongraph_graphql_request_duration_seconds_count{operation="ListSessions",type="query"} 2`,
		"sessiongraph_subscriptions_active 0",
		"sessiongraph_event_lag_seconds",
		// the pool as sized from this machine and this PostgreSQL
		fmt.Sprintf(`go_sql_max_open_connections{db_name="sessiongraph"} %d`, s.DB.Stats().MaxOpenConnections),
		"go_goroutines",
	} {
		assert.Contains(t, text, want)
	}
	// The NOTIFY queue is shared by every database of the server: other
	// tests may be using it, so only its range is certain.
	m := regexp.MustCompile(`(?m)^sessiongraph_notification_queue_usage_ratio (\S+)$`).FindStringSubmatch(text)
	require.Len(t, m, 2)
	usage, err := strconv.ParseFloat(m[1], 64)
	require.NoError(t, err)
	assert.True(t, usage >= 0 && usage < 1, "usage %v", usage)
}
