package graph_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/testdb"
	"sessiongraph/migrations"
)

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
// It runs over TCP and over a Unix socket, whichever DATABASE_URL names:
// the proxy that takes the database down presents it either way.
func TestWritesWhileTheDatabaseIsDownAreRetryable(t *testing.T) {
	for _, transport := range testdb.Transports {
		t.Run(string(transport), func(t *testing.T) { writesWhileTheDatabaseIsDown(t, transport) })
	}
}

func writesWhileTheDatabaseIsDown(t *testing.T, transport testdb.Transport) {
	proxy := testdb.NewProxy(t, testdb.New(t, migrations.Apply, migrations.Fingerprint()), transport)
	s := apitest.Replica(t, proxy.DSN)
	a := newAgent(t, s, "outage")
	update := `mutation($id: ID!) { updateSession(input: {id: $id, historySummary: "kept"}) { session { historySummary } } }`
	read := `query($id: ID!) { session(id: $id) { id historySummary } }`
	ids := map[string]any{"id": a.id}

	proxy.Cut()
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

	proxy.Mend()
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
