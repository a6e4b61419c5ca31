package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
)

// auditDir holds the audit script and its pinned npm dependencies.
const auditDir = "testdata/graphql-http"

// auditResult is one audit of graphql-http's auditServer: status is "ok",
// "warn" (a SHOULD failed), "notice" (a MAY) or "error" (a MUST).
type auditResult struct {
	ID     string `json:"id"`
	Name   string `json:"name"`
	Status string `json:"status"`
	Reason string `json:"reason"`
}

// runAudit runs the spec's public audit under Node against url.
func runAudit(t *testing.T, url, key string) []auditResult {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed: this test runs the npm graphql-http audit against the server; install Node.js 20+ with npm", tool)
		}
	}
	if _, err := os.Stat(filepath.Join(auditDir, "node_modules", "graphql-http", "package.json")); err != nil {
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
		cmd.Dir = auditDir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci in %s: %v\n%s", auditDir, err, out)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "audit.mjs", url+"/graphql", key)
	cmd.Dir = auditDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "node audit.mjs: %s", stderr.String())
	var results []auditResult
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &results), stdout.String())
	require.Greater(t, len(results), 50, "the audit ran its checks")
	return results
}

// failed lists the audits that did not pass, by id.
func failed(results []auditResult) map[string]string {
	out := map[string]string{}
	for _, r := range results {
		if r.Status != "ok" {
			out[r.ID] = r.Status + ": " + r.Name + ": " + r.Reason
		}
	}
	return out
}

// The GraphQL over HTTP spec's audit passes every MUST, SHOULD and MAY
// against the server as `make run` serves it (introspection on: the audit
// queries __type).
func TestGraphQLOverHTTPAudit(t *testing.T) {
	s := apitest.New(t, func(c *app.Config) { c.Introspection = true })
	assert.Empty(t, failed(runAudit(t, s.URL, s.Key)))
}

// With introspection off (the binary's default) the audits that query
// __type are answered INTROSPECTION_DISABLED, by policy; every other one
// still passes.
func TestGraphQLOverHTTPAuditWithoutIntrospection(t *testing.T) {
	s := apitest.New(t)
	assert.Equal(t, map[string]string{
		"28B9": `error: MUST allow map {variables} parameter when accepting application/json: Response body execution result has a property "errors"`,
		"2EA1": "warn: SHOULD allow map {variables} parameter when accepting application/graphql-response+json: Response status code is not 200",
		"6A70": `notice: MAY allow URL-encoded JSON string {variables} parameter in GETs when accepting application/json: Response body execution result has a property "errors"`,
		"D6D5": "notice: MAY allow URL-encoded JSON string {variables} parameter in GETs when accepting application/graphql-response+json: Response status code is not 200",
	}, failed(runAudit(t, s.URL, s.Key)), "each of these queries __type(name: $name)")
}
