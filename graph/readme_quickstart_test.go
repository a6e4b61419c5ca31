package graph_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// readmeBlock answers the first fenced block of the given language after
// marker in README.md.
func readmeBlock(t *testing.T, marker, lang string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	require.NoError(t, err)
	readme := string(b)
	i := strings.Index(readme, marker)
	require.GreaterOrEqual(t, i, 0, "README.md has no %q", marker)
	rest := readme[i:]
	start := strings.Index(rest, "```"+lang+"\n")
	require.GreaterOrEqual(t, start, 0, "no ```%s block after %q", lang, marker)
	rest = rest[start+len("```"+lang+"\n"):]
	end := strings.Index(rest, "```")
	require.GreaterOrEqual(t, end, 0)
	return rest[:end]
}

// The README's first agent turn in curl runs as written (less the line
// that sets the URL and key, which the test gives) and answers what the
// README shows, line for line.
func TestTheReadmesQuickStartCurlRuns(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq"} {
		_, err := exec.LookPath(tool)
		require.NoError(t, err, "the README's quick start needs %s: apt-get install %s", tool, tool)
	}
	script := readmeBlock(t, "**curl**", "sh")
	want := readmeBlock(t, "**curl**", "json")
	var lines []string
	for _, l := range strings.Split(script, "\n") {
		if !strings.HasPrefix(l, "export SG_URL=") {
			lines = append(lines, l)
		}
	}
	require.Len(t, lines, len(strings.Split(script, "\n"))-1, "the snippet sets SG_URL and SG_API_KEY on one export line")
	s := apitest.New(t)
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", strings.Join(lines, "\n"))
	cmd.Env = append(os.Environ(), "SG_URL="+s.URL, "SG_API_KEY="+s.AdminKey)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, want, string(out))
}
