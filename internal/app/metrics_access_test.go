package app_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// getMetrics asks the API port for /metrics with key ("" for none) and
// returns the status, the body and the error code of a refusal.
func getMetrics(t *testing.T, s *apitest.Server, key string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.URL+"/metrics", nil)
	require.NoError(t, err)
	s.WithKey(key).Authorize(req)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	var refusal struct {
		Errors []struct {
			Extensions struct{ Code string } `json:"extensions"`
		} `json:"errors"`
	}
	if res.StatusCode != http.StatusOK {
		require.NoError(t, json.Unmarshal(body, &refusal), "%s", body)
		require.Len(t, refusal.Errors, 1)
		return res.StatusCode, string(body), refusal.Errors[0].Extensions.Code
	}
	return res.StatusCode, string(body), ""
}

// On the API port, /metrics (operation names, tenants' traffic) is an
// operator's: no key gets 401, a tenant's key 403, an ADMIN key the metrics.
func TestMetricsOnTheAPIPortNeedAnAdminKey(t *testing.T) {
	s := apitest.New(t)
	status, body, code := getMetrics(t, s, "")
	assert.Equal(t, http.StatusUnauthorized, status)
	assert.Equal(t, "UNAUTHENTICATED", code)
	assert.NotContains(t, body, "sessiongraph_")

	status, body, code = getMetrics(t, s, s.NewKey(t, "CLIENT", "acme"))
	assert.Equal(t, http.StatusForbidden, status)
	assert.Equal(t, "FORBIDDEN", code)
	assert.NotContains(t, body, "sessiongraph_")

	status, body, _ = getMetrics(t, s, s.AdminKey)
	assert.Equal(t, http.StatusOK, status)
	assert.True(t, strings.Contains(body, "sessiongraph_http_requests_total"), body)
}
