package clients_test

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/testnpm"
)

// typescriptClient installs clients/typescript's packages once (npm ci from the
// committed lock) and builds it afresh with tsc (scripts/build.mjs); it answers
// the package's directory.
func typescriptClient(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("typescript")
	require.NoError(t, err)
	for _, tool := range []string{"node", "npm"} {
		_, err := exec.LookPath(tool)
		require.NoError(t, err, "%s is needed to test the TypeScript client (clients/typescript): apt-get install nodejs npm", tool)
	}
	// npm ci on first use, and again when the lock file changed since; the
	// root package's deploy test builds it too, at the same time.
	testnpm.Locked(t, dir, func() {
		lock, err := os.Stat(filepath.Join(dir, "package-lock.json"))
		require.NoError(t, err)
		if installed, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json")); err != nil || installed.ModTime().Before(lock.ModTime()) {
			typescriptRun(t, dir, 5*time.Minute, nil, "npm", "ci", "--no-audit", "--no-fund")
		}
		typescriptNoGoFiles(t, filepath.Join(dir, "node_modules"))
		typescriptRun(t, dir, 2*time.Minute, nil, "node", filepath.Join("scripts", "build.mjs"))
	})
	return dir
}

// typescriptNoGoFiles fails when an npm package ships .go files: node_modules
// sits inside the Go module, so go vet ./... and go test ./... would build them.
func typescriptNoGoFiles(t *testing.T, dir string) {
	t.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			found = append(found, path)
		}
		return nil
	})
	require.NoError(t, err)
	require.Empty(t, found, "npm packages ship .go files, which go vet ./... would build: keep them from Go (a go.mod in their directory)")
}

func typescriptRun(t *testing.T, dir string, timeout time.Duration, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %s:\n%s", name, strings.Join(args, " "), out)
	return string(out)
}

var typescriptCount = regexp.MustCompile(`(?m)^# (tests|pass|fail|cancelled|skipped|todo) (\d+)$`)

// The TypeScript client's tests (node --test) run against the real server:
// requests and their errors, the turn helper, refs and context builds,
// subscriptions resuming across cut connections over WebSocket and SSE,
// revoked keys, the README's agent loop (examples/agent-loop.ts), and the
// committed generated code regenerated and compared.
func TestTypeScriptClient(t *testing.T) {
	dir := typescriptClient(t)
	s := apitest.New(t)
	out := typescriptRun(t, dir, 3*time.Minute,
		[]string{"SG_URL=" + s.URL + "/graphql", "SG_API_KEY=" + s.AdminKey},
		"node", "--test", "--test-reporter=tap", filepath.Join("dist", "test"))
	counts := map[string]string{}
	for _, m := range typescriptCount.FindAllStringSubmatch(out, -1) {
		counts[m[1]] = m[2]
	}
	require.NotEqual(t, "", counts["tests"], "no summary in the output:\n%s", out)
	require.NotEqual(t, "0", counts["tests"], out)
	require.Equal(t, counts["tests"], counts["pass"], out)
	for _, k := range []string{"fail", "cancelled", "skipped", "todo"} {
		require.Equal(t, "0", counts[k], "%s:\n%s", k, out)
	}
	t.Logf("node --test: %s tests, %s passed", counts["tests"], counts["pass"])
}
