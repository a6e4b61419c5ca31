package graph_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// nodeClients installs the npm clients once (npm ci from the committed lock).
func nodeClients(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "node"))
	require.NoError(t, err)
	for _, tool := range []string{"node", "npm"} {
		_, err := exec.LookPath(tool)
		require.NoError(t, err, "%s is needed to run the real npm clients: apt-get install nodejs npm", tool)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "graphql-sse")); err != nil {
		cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "npm ci: %s", out)
	}
	return dir
}

// The real npm clients graphql-ws (WebSocket) and graphql-sse (Server-Sent
// Events) subscribe and receive a session's events, replayed then live.
func TestNpmClientsReceiveSessionEvents(t *testing.T) {
	dir := nodeClients(t)
	s := apitest.New(t)
	id := open(t, s, map[string]any{"tenant": "acme", "externalKey": "npm"}).OpenSession.Session.ID
	touch(t, s, id, 0)
	for _, kind := range []string{"ws", "sse"} {
		t.Run(kind, func(t *testing.T) {
			cmd := exec.Command("node", "subscribe.mjs", kind, s.URL+"/graphql", id, "4")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "SG_API_KEY="+s.Key)
			cmd.Stderr = os.Stderr
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			lines := bufio.NewScanner(stdout)
			require.True(t, lines.Scan())
			require.Equal(t, "ready", lines.Text())

			var got []map[string]any
			for len(got) < 4 && lines.Scan() {
				var ev map[string]any
				require.NoError(t, json.Unmarshal(lines.Bytes(), &ev), lines.Text())
				got = append(got, ev)
				if len(got) == 2 { // history replayed: now go live
					touch(t, s, id, 1)
					touch(t, s, id, 2)
				}
			}
			require.NoError(t, cmd.Wait())
			require.Len(t, got, 4)
			kinds := []any{got[0]["kind"], got[1]["kind"], got[2]["kind"], got[3]["kind"]}
			assert.Equal(t, []any{"session.opened", "session.updated", "session.updated", "session.updated"}, kinds)
			for i := 1; i < 4; i++ {
				assert.Greater(t, got[i]["sequence"], got[i-1]["sequence"])
			}
		})
	}
}
