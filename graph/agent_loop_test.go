package graph_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// The agent loop in curl (docs/agent-loop.sh, shown in docs/agent-loop.md) runs as written
// against a real server: read, generate, context, save, context again.
func TestTheReadmesCurlAgentLoopRuns(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq"} {
		_, err := exec.LookPath(tool)
		require.NoError(t, err, "the README's curl loop needs %s: apt-get install %s", tool, tool)
	}
	s := apitest.New(t)
	script, err := filepath.Abs(filepath.Join("..", "docs", "agent-loop.sh"))
	require.NoError(t, err)
	cmd := exec.Command("bash", script)
	cmd.Env = append(os.Environ(), "SG_URL="+s.URL, "SG_API_KEY="+s.Key)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, want := range []string{
		`"refs":[{"ref":"recipe_1","label":"Dal Tadka"},{"ref":"recipe_2","label":"Chana Masala"}]`,
		`{"recordGenerated":{"ref":{"ref":"gen_meal_plan_1","label":"2026-01-12 dinner"}}}`,
		`"tiers":{"generated":["gen_meal_plan_1"]}`,
		`"recipe_id":"0190a5b4-0000-7000-8000-000000000001"},"saves":null`,
		`{"recordCreated":{"promoted":true`,
		"## Just saved (content kept for linked records)",
		`{"endTurn":{"turn":{"number":2,"status":"COMPLETED"}}}`,
	} {
		assert.Contains(t, string(out), want)
	}
}

// SG_KEY, the key's variable before 0.2, still drives the script, with a
// deprecation notice on stderr.
func TestTheCurlAgentLoopStillReadsTheOldKeyVariable(t *testing.T) {
	s := apitest.New(t)
	script, err := filepath.Abs(filepath.Join("..", "docs", "agent-loop.sh"))
	require.NoError(t, err)
	cmd := exec.Command("bash", script)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SG_API_KEY=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "SG_URL="+s.URL, "SG_KEY="+s.Key)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "%s\n%s", out, stderr.String())
	assert.Contains(t, stderr.String(), "agent-loop.sh: SG_KEY is deprecated: set SG_API_KEY")
	assert.Contains(t, string(out), `{"endTurn":{"turn":{"number":2,"status":"COMPLETED"}}}`)
}
