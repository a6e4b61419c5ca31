package app_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
)

// syncBuffer collects log output written from the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines returns the access log lines ("msg":"request") written so far.
func (b *syncBuffer) lines(t *testing.T) []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, l := range bytes.Split(bytes.TrimSpace(b.buf.Bytes()), []byte("\n")) {
		var m map[string]any
		if len(l) == 0 {
			continue
		}
		require.NoError(t, json.Unmarshal(l, &m))
		if m["msg"] == "request" {
			delete(m, "time")
			delete(m, "duration")
			delete(m, "request_id")
			out = append(out, m)
		}
	}
	return out
}

// At info, the production level, a request that succeeds in time writes no
// log line; a refused one does, and every request is counted in /metrics.
func TestOnlyRequestsThatNeedAttentionAreLoggedAtInfo(t *testing.T) {
	var logs syncBuffer
	s := apitest.New(t, func(c *app.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
	s.MustDo(t, `{ viewer { role } }`, nil, nil)
	s.MustDo(t, `{ viewer { role } }`, nil, nil)
	res := s.WithKey("sg_not_a_key").Do(t, `{ viewer { role } }`, nil)
	require.Equal(t, http.StatusUnauthorized, res.Status)

	assert.Equal(t, []map[string]any{
		{"level": "INFO", "msg": "request", "method": "POST", "path": "/graphql", "status": float64(401)},
	}, logs.lines(t))

	metrics := scrape(t, s.MetricsHandler())
	assert.Contains(t, metrics, `sessiongraph_http_requests_total{route="/graphql",status="200"} 2`)
	assert.Contains(t, metrics, `sessiongraph_http_requests_total{route="/graphql",status="401"} 1`)
}

func TestSlowRequestsAreLoggedAtWarnAndTheRestAtDebug(t *testing.T) {
	var logs syncBuffer
	s := apitest.New(t, func(c *app.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		c.SlowRequest = time.Hour
	})
	s.MustDo(t, `{ viewer { role } }`, nil, nil)
	slow := apitest.New(t, func(c *app.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
		c.SlowRequest = time.Nanosecond
	})
	slow.MustDo(t, `{ viewer { role } }`, nil, nil)

	assert.Equal(t, []map[string]any{
		{"level": "DEBUG", "msg": "request", "method": "POST", "path": "/graphql", "status": float64(200)},
		{"level": "WARN", "msg": "request", "method": "POST", "path": "/graphql", "status": float64(200)},
	}, logs.lines(t))
}

// scrape reads the metrics as the scraper on -metrics-listen does.
func scrape(t *testing.T, h http.Handler) string {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	return rec.Body.String()
}
