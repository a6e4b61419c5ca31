package graph_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
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

// An outage is logged when it begins and when it ends, not once per
// request it fails: 30 requests answered 503 during it leave one ERROR line.
func TestAnOutageIsLoggedOncePerStateChange(t *testing.T) {
	for _, transport := range testdb.Transports {
		t.Run(string(transport), func(t *testing.T) { outageLoggedOnce(t, transport) })
	}
}

func outageLoggedOnce(t *testing.T, transport testdb.Transport) {
	proxy := testdb.NewProxy(t, testdb.New(t, migrations.Apply, migrations.Fingerprint()), transport)
	var logs logLines
	s := apitest.Replica(t, proxy.DSN, func(c *app.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
	a := newAgent(t, s, "outage-log")
	read := `query($id: ID!) { session(id: $id) { id } }`
	ids := map[string]any{"id": a.id}

	proxy.Cut()
	for range 30 {
		status, _, codes := post(t, s, read, ids)
		require.Equal(t, http.StatusServiceUnavailable, status)
		require.Equal(t, []string{"UNAVAILABLE"}, codes)
	}
	proxy.Mend()
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
