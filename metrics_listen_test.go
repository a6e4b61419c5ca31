package main

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/testdb"
	"sessiongraph/migrations"
)

// With -metrics-listen, a scraper reads /metrics on that address without a
// key, and only /metrics is there; the API port still refuses it without one.
func TestMetricsListenServesMetricsAloneOnItsOwnAddress(t *testing.T) {
	env := binaryEnv("DATABASE_URL=" + testdb.New(t, migrations.Apply, migrations.Fingerprint()))
	srv := serveBinary(t, env, "-metrics-listen", "127.0.0.1:0")
	var metricsURL string
	for _, l := range srv.lines {
		if m := regexp.MustCompile(`^metrics at (http://127\.0\.0\.1:\d+)/metrics$`).FindStringSubmatch(l); m != nil {
			metricsURL = m[1]
		}
	}
	require.NotEmpty(t, metricsURL, srv.lines)

	status, body := httpGet(t, metricsURL+"/metrics")
	assert.Equal(t, http.StatusOK, status)
	assert.True(t, strings.Contains(body, "\nsessiongraph_subscriptions_active 0\n"), "the metrics are served")
	status, _ = httpGet(t, metricsURL+"/graphql?query=%7B__typename%7D")
	assert.Equal(t, http.StatusNotFound, status, "the metrics address serves nothing else")

	status, body = httpGet(t, srv.url+"/metrics")
	assert.Equal(t, http.StatusUnauthorized, status)
	assert.NotContains(t, body, "sessiongraph_")
}

func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	res, err := http.Get(url)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(body)
}
