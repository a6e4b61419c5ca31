package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/config"
	"sessiongraph/internal/testdb"
	"sessiongraph/migrations"
)

// TestServeThenShutDownGracefully runs the server as make run does, asks it
// a query, and stops it the way SIGTERM does.
func TestServeThenShutDownGracefully(t *testing.T) {
	domain := t.TempDir() + "/garden.yaml"
	require.NoError(t, os.WriteFile(domain, []byte("domain: garden\nentityTypes:\n  - {name: plant, table: plants, labelField: name}\n"), 0o600))
	settings, _, err := config.Load("sessiongraph", []string{"-listen", "127.0.0.1:0", "-introspection", "-domain-file", domain, "-bootstrap-admin-key"},
		func(string) (string, bool) { return "", false }, io.Discard, nil)
	require.NoError(t, err)
	settings.DatabaseURL = testdb.New(t, migrations.Apply, migrations.Fingerprint())

	// The deadline only bounds a server that never gets ready (a database
	// it cannot reach): the test stops it well before, as SIGTERM does.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	out, printed := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := run(ctx, settings, slog.New(slog.NewTextHandler(io.Discard, nil)), printed, printed)
		printed.CloseWithError(fmt.Errorf("the server stopped: %v", err)) // a reader waiting for a line is told
		done <- err
	}()

	lines := bufio.NewReader(out)
	line, err := lines.ReadString('\n')
	require.NoError(t, err)
	key := regexp.MustCompile(`sg_[A-Za-z0-9_-]{43}`).FindString(line)
	require.NotEmpty(t, key, "a new installation prints its first admin key: %s", line)
	line, err = lines.ReadString('\n')
	require.NoError(t, err)
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+`).FindString(line)
	require.NotEmpty(t, url, line)
	go io.Copy(io.Discard, out)

	req, err := http.NewRequest(http.MethodPost, url+"/graphql",
		strings.NewReader(`{"query":"{ __typename sessions(first: 5) { totalCount } entityTypes(domain: \"garden\") { name tableName } }"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	assert.JSONEq(t, `{"data":{"__typename":"Query","sessions":{"totalCount":0},"entityTypes":[{"name":"plant","tableName":"plants"}]}}`, string(body),
		"the domain file was loaded at start")

	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err, "shutdown is clean")
	case <-time.After(20 * time.Second):
		t.Fatal("the server did not stop")
	}
	_, err = http.Get(url + "/healthz")
	assert.Error(t, err, "nothing listens after shutdown")
}
