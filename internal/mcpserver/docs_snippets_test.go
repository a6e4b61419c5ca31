package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/testpy"
)

// docsPage is the page whose snippets run here.
const docsPage = "../../docs/mcp.md"

// fence is one fenced code block of a page.
type fence struct {
	lang, text string
	line       int // where it opens
}

// fences answers every fenced block of page, in order.
func fences(t *testing.T, page string) []fence {
	t.Helper()
	b, err := os.ReadFile(page)
	require.NoError(t, err)
	var all []fence
	var open *fence
	for i, line := range strings.Split(string(b), "\n") {
		switch {
		case open == nil && strings.HasPrefix(line, "```"):
			open = &fence{lang: strings.TrimPrefix(line, "```"), line: i + 1}
		case open != nil && line == "```":
			all = append(all, *open)
			open = nil
		case open != nil:
			open.text += line + "\n"
		}
	}
	require.Nil(t, open, "%s: a fence opened and never closed", page)
	return all
}

// printedByComments answers what a snippet says it prints: the comment
// (after marker) ending each line that calls print, one line each.
func printedByComments(t *testing.T, f fence, call, marker string) string {
	t.Helper()
	var want strings.Builder
	for _, line := range strings.Split(f.text, "\n") {
		if !strings.Contains(line, call) {
			continue
		}
		i := strings.LastIndex(line, marker)
		require.GreaterOrEqual(t, i, 0, "docs/mcp.md:%d: %q does not say what it prints (%s...)", f.line, line, marker)
		want.WriteString(line[i+len(marker):] + "\n")
	}
	require.NotEmpty(t, want.String(), "docs/mcp.md:%d: the snippet prints nothing to check", f.line)
	return want.String()
}

// Every snippet of docs/mcp.md runs as written, by its fence: TypeScript
// with the pinned TypeScript SDK, Python in a venv with the pinned `mcp`,
// each against a real server with SG_URL and SG_API_KEY, and prints what
// its comments say; every JSON block parses. (The stdio configuration's
// command runs in the root package's mcp_stdio_test.go, which builds it.)
func TestDocsMCPSnippetsRun(t *testing.T) {
	all := fences(t, docsPage)
	langs := map[string]int{}
	for _, f := range all {
		langs[f.lang]++
	}
	require.Equal(t, map[string]int{"json": 4, "ts": 1, "python": 1}, langs,
		"docs/mcp.md's blocks by fence: a block of another language needs a test here")

	s := apitest.New(t)
	env := []string{"SG_URL=" + s.URL, "SG_API_KEY=" + s.NewKey(t, "CLIENT", "acme")}
	for _, f := range all {
		switch f.lang {
		case "json":
			require.True(t, json.Valid([]byte(f.text)), "docs/mcp.md:%d: the JSON block does not parse:\n%s", f.line, f.text)
			if strings.Contains(f.text, `"type": "http"`) {
				httpConfigConnects(t, f, s.URL, s.NewKey(t, "CLIENT", "acme"))
			}
		case "ts":
			t.Run("typescript", func(t *testing.T) {
				want := printedByComments(t, f, "console.log(", "// ")
				typescriptSDK(t)
				// The snippet has no type annotations, so Node runs it as a
				// module beside the SDK's pinned install.
				dir := t.TempDir()
				modules, err := filepath.Abs(filepath.Join(clientDir, "node_modules"))
				require.NoError(t, err)
				require.NoError(t, os.Symlink(modules, filepath.Join(dir, "node_modules")))
				script := filepath.Join(dir, "snippet.mjs")
				require.NoError(t, os.WriteFile(script, []byte(f.text), 0o644))
				require.Equal(t, want, runSnippet(t, env, "node", script))
			})
		case "python":
			t.Run("python", func(t *testing.T) {
				want := printedByComments(t, f, "print(", "# ")
				python := testpy.Venv(t, "../../clients/python/constraints.txt", "mcp")
				script := filepath.Join(t.TempDir(), "snippet.py")
				require.NoError(t, os.WriteFile(script, []byte(f.text), 0o644))
				require.Equal(t, want, runSnippet(t, env, python, script))
			})
		}
	}
}

// httpConfigConnects checks the host configuration for streamable HTTP:
// its URL, on the server's address, with its header, the key in place of
// sg_..., initializes.
func httpConfigConnects(t *testing.T, f fence, serverURL, key string) {
	t.Helper()
	var config struct {
		MCPServers map[string]struct {
			Type    string            `json:"type"`
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"mcpServers"`
	}
	require.NoError(t, json.Unmarshal([]byte(f.text), &config))
	server := config.MCPServers["sessiongraph"]
	require.Equal(t, "http://127.0.0.1:8080/mcp", server.URL, "make run's address")
	require.Equal(t, map[string]string{"Authorization": "Bearer sg_..."}, server.Headers)
	req, err := http.NewRequest(http.MethodPost, strings.Replace(server.URL, "http://127.0.0.1:8080", serverURL, 1),
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}`))
	require.NoError(t, err)
	for name, value := range server.Headers {
		req.Header.Set(name, strings.Replace(value, "sg_...", key, 1))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode, "%s", body)
	require.Contains(t, string(body), `"serverInfo":{"name":"sessiongraph"`)
}

// runSnippet runs a snippet with env and answers its stdout; it fails the
// test when the snippet fails or writes to stderr.
func runSnippet(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "%s %s:\n%s", name, strings.Join(args, " "), stderr.String())
	require.Empty(t, stderr.String())
	return stdout.String()
}
