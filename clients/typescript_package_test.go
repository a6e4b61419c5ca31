package clients_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/testnpm"
)

// typescriptPackageSmoke is what a project that installed the packed client runs: the core
// client, both adapters through their package exports, and type checking against the
// package's declarations.
const typescriptPackageSmoke = `import { SessionGraphClient } from '@sessiongraph/client';
import { SessionGraphSession } from '@sessiongraph/client/openai-agents';
import { SessionGraphChatMessageHistory } from '@sessiongraph/client/langchain';
import { HumanMessage, AIMessage } from '@langchain/core/messages';

const sg = new SessionGraphClient();
const { session } = await sg.openSession({ tenant: 'acme', externalKey: 'packed-' + Date.now() });
const turn = await sg.turn(session.id, 'What can I cook?', async (t) => {
  const read = await t.recordRead({ table: 'recipes', records: [{ id: crypto.randomUUID(), name: 'Dal Tadka' }] });
  return 'Try ' + read.refs[0]!.label + ' (' + read.refs[0]!.ref + ').';
});
const memory = new SessionGraphSession(sg, session.id);
const items = await memory.getItems();
const history = new SessionGraphChatMessageHistory(sg, session.id);
await history.addMessages([new HumanMessage('And dessert?'), new AIMessage('Kheer.')]);
const messages = await history.getMessages();
console.log(JSON.stringify({ turn: turn.status, items: items.length, messages: messages.map((m) => m.content) }));
await sg.close();
`

// The TypeScript client as a team depends on it: npm pack makes a tarball (not a link into the
// checkout) with the licence, the compiled code and its types, and no tests; installed into a
// fresh folder with the adapters' packages, it type-checks and runs a turn and both adapters
// against the real server.
func TestTypeScriptPackage(t *testing.T) {
	dir := typescriptClient(t)
	tmp := t.TempDir()
	var out string
	testnpm.Locked(t, dir, func() { // not while another test binary rebuilds dist/
		out = typescriptRun(t, dir, 2*time.Minute, nil, "npm", "pack", "--ignore-scripts", "--json", "--pack-destination", tmp)
	})
	var packed []struct {
		Filename string `json:"filename"`
		Files    []struct {
			Path string `json:"path"`
		} `json:"files"`
	}
	require.NoError(t, json.Unmarshal([]byte(out[strings.Index(out, "["):]), &packed), out)
	require.Len(t, packed, 1)
	require.Equal(t, "sessiongraph-client-0.2.0.tgz", packed[0].Filename)
	files := map[string]bool{}
	for _, f := range packed[0].Files {
		files[f.Path] = true
		require.False(t, strings.HasPrefix(f.Path, "dist/test/"), "the tarball carries the tests: %s", f.Path)
	}
	for _, f := range []string{"LICENSE", "README.md", "package.json", "dist/src/index.js", "dist/src/index.d.ts",
		"dist/src/adapters/openai-agents.js", "dist/src/adapters/openai-agents.d.ts",
		"dist/src/adapters/langchain.js", "dist/src/adapters/langchain.d.ts"} {
		require.True(t, files[f], "the tarball lacks %s", f)
	}
	license, err := os.ReadFile(filepath.Join("..", "LICENSE"))
	require.NoError(t, err)
	own, err := os.ReadFile(filepath.Join(dir, "LICENSE"))
	require.NoError(t, err)
	require.Equal(t, string(license), string(own), "clients/typescript/LICENSE is the repository's")

	app := filepath.Join(tmp, "app")
	require.NoError(t, os.MkdirAll(app, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(app, "package.json"), []byte(`{"name": "app", "private": true, "type": "module"}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(app, "smoke.ts"), []byte(typescriptPackageSmoke), 0o644))
	typescriptRun(t, app, 5*time.Minute, nil, "npm", "install", "--no-audit", "--no-fund",
		filepath.Join(tmp, packed[0].Filename), "@openai/agents-core@0.20.0", "@langchain/core@1.4.0", "@types/node@20.19.43")
	installed := filepath.Join(app, "node_modules", "@sessiongraph", "client")
	info, err := os.Lstat(installed)
	require.NoError(t, err)
	require.False(t, info.Mode()&os.ModeSymlink != 0, "the installed package is a link, not the tarball's files")
	var manifest map[string]any
	b, err := os.ReadFile(filepath.Join(installed, "package.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &manifest))
	require.Equal(t, "Apache-2.0", manifest["license"])
	require.NotContains(t, manifest, "private")

	// Type-check the way a TypeScript project would, with the client's pinned tsc, then run it.
	tsc := filepath.Join(dir, "node_modules", "typescript", "bin", "tsc")
	typescriptRun(t, app, 2*time.Minute, nil, "node", tsc, "--strict", "--target", "ES2022", "--module", "NodeNext",
		"--moduleResolution", "NodeNext", "--skipLibCheck", "--types", "node", "smoke.ts")
	s := apitest.New(t)
	out = typescriptRun(t, app, time.Minute, []string{"SG_URL=" + s.URL, "SG_API_KEY=" + s.AdminKey}, "node", "smoke.js")
	require.JSONEq(t, `{"turn": "COMPLETED", "items": 2, "messages": ["What can I cook?", "Try Dal Tadka (recipe_1).", "And dessert?", "Kheer."]}`,
		strings.TrimSpace(out))
}
