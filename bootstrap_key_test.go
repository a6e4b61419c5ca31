package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/testdb"
	"sessiongraph/migrations"
)

const bootstrapLine = "first admin API key, shown this once (send it as 'Authorization: Bearer <key>'): "

// bootstrappedKey waits for the first admin key on a server's stderr
// (copied from the process's pipe by a goroutine of its own).
func bootstrappedKey(t *testing.T, stderr *lockedBuffer) string {
	t.Helper()
	var key string
	require.Eventually(t, func() bool {
		for _, line := range strings.Split(stderr.String(), "\n") {
			if k, ok := strings.CutPrefix(line, bootstrapLine); ok {
				key = k
				return true
			}
		}
		return false
	}, 20*time.Second, 10*time.Millisecond, "no first admin key on stderr")
	require.Regexp(t, keyPattern, key)
	return key
}

// The bootstrapped admin key is a plain line on stderr for the operator at
// the terminal: no JSON log record holds it, even at debug with the key in
// use, and stdout (what a supervisor may log as data) never shows it.
func TestTheBootstrapAdminKeyNeverReachesTheStructuredLog(t *testing.T) {
	env := binaryEnv("DATABASE_URL=" + testdb.New(t, migrations.Apply, migrations.Fingerprint()))
	srv := serveBinary(t, env, "-bootstrap-admin-key", "-log-format", "json", "-log-level", "debug")
	key := bootstrappedKey(t, srv.stderr)
	require.Equal(t, http.StatusOK, status(t, srv.url, key))
	require.Equal(t, http.StatusUnauthorized, status(t, srv.url, key+"x"))
	for _, l := range srv.lines {
		assert.NotContains(t, l, key[3:])
	}

	records, plain := 0, 0
	for _, line := range strings.Split(strings.TrimSpace(srv.stderr.String()), "\n") {
		if json.Valid([]byte(line)) {
			records++
			assert.NotContains(t, line, key[3:], "a log record holds the key")
			continue
		}
		plain++
		assert.Equal(t, bootstrapLine+key, line, "the only line that is no log record")
	}
	assert.Equal(t, 1, plain)
	assert.Positive(t, records, "the server logged at debug")
}
