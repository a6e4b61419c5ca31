package app_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

func TestRoutes(t *testing.T) {
	s := apitest.New(t)
	for _, c := range []struct {
		path, contains, contentType string
	}{
		{"/healthz", "ok", "text/plain"},
		{"/readyz", "ready", "text/plain"},
		{"/", "sessiongraph", "text/html"},
		{"/graphiql", "/graphql", "text/html"},
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
