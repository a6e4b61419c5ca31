package app_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// The pages that hold an admin key (the dashboard, GraphiQL) forbid other
// sites' scripts and frames, and the static folders list no files.
func TestPagesSendSecurityHeadersAndListNoDirectory(t *testing.T) {
	s := apitest.New(t)
	for _, page := range []string{"/", "/graphiql", "/js/main.js", "/graphiql/main.js"} {
		res, err := http.Get(s.URL + page)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode, page)
		assert.Contains(t, res.Header.Get("Content-Security-Policy"), "script-src 'self';", page)
		assert.Contains(t, res.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'", page)
		assert.Equal(t, "DENY", res.Header.Get("X-Frame-Options"), page)
		assert.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"), page)
		assert.Equal(t, "no-referrer", res.Header.Get("Referrer-Policy"), page)
	}
	for _, dir := range []string{"/js/", "/js", "/vendor/", "/vendor/graphql-ws/", "/graphiql/vendor/", "/graphiql/vendor/react/"} {
		res, err := http.Get(s.URL + dir)
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, http.StatusNotFound, res.StatusCode, dir)
	}
}
