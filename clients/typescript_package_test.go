package clients_test

import (
	"encoding/json"
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

// readmeTypeScriptPath answers the README's TypeScript path: the commands that
// install the client into a project of one's own, the file the snippet is saved
// as, the snippet, and the command that runs it.
func readmeTypeScriptPath(t *testing.T) (install, file, snippet, run string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	require.NoError(t, err)
	readme := string(b)
	i := strings.Index(readme, "**TypeScript**")
	require.GreaterOrEqual(t, i, 0, "README.md has no **TypeScript** paragraph")
	rest := readme[i:]
	var blocks, langs, between []string
	for len(blocks) < 3 {
		start := strings.Index(rest, "\n```")
		require.GreaterOrEqual(t, start, 0, "README.md's TypeScript path has fewer than three fenced blocks")
		between = append(between, rest[:start])
		rest = rest[start+4:]
		nl := strings.Index(rest, "\n")
		langs = append(langs, rest[:nl])
		rest = rest[nl+1:]
		end := strings.Index(rest, "\n```\n")
		require.GreaterOrEqual(t, end, 0)
		blocks = append(blocks, rest[:end+1])
		rest = rest[end+4:]
	}
	require.Equal(t, []string{"sh", "ts", "sh"}, langs, "README.md's TypeScript path: install commands, the snippet, the command that runs it")
	m := regexp.MustCompile("Save this as `([^`]+)`").FindStringSubmatch(between[1])
	require.NotNil(t, m, "README.md says what to save the snippet as: %q", between[1])
	return blocks[0], m[1], blocks[1], blocks[2]
}

// gitStatus answers git status, untracked and ignored files included, for
// clients/typescript and what npm writes at the checkout's top level when run
// there (package.json, its lock, node_modules, a tarball); not the rest of the
// checkout, which others may be editing meanwhile.
func gitStatus(t *testing.T, root string) string {
	t.Helper()
	return typescriptRun(t, root, time.Minute, nil, "git", "status", "--porcelain=v1", "--untracked-files=all",
		"--ignored=matching", "--", "clients/typescript", ":(top)package.json", ":(top)package-lock.json",
		":(top)node_modules", ":(top,glob)*.tgz")
}

// The README's TypeScript path runs as written, in a fresh project outside the
// checkout: npm pack from the checkout, npm install of the tarball, the snippet
// saved as the README says and run with node. The project gets the client and
// its runtime packages only (no code generator, no link into the checkout), npm
// warns of nothing (no EBADENGINE on this machine's Node 20), the snippet prints
// what its comments promise, and the checkout is as it was.
func TestTheReadmesTypeScriptPathRuns(t *testing.T) {
	dir := typescriptClient(t)
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	install, file, snippet, run := readmeTypeScriptPath(t)
	require.Contains(t, install, "/path/to/sessiongraph/")
	require.Equal(t, "first-turn.mjs", file)
	require.Equal(t, "node first-turn.mjs\n", run)

	var want []string
	for _, m := range regexp.MustCompile(`(?m)^\s*console\.log\(.*\); // (.+)$`).FindAllStringSubmatch(snippet, -1) {
		want = append(want, m[1])
	}
	require.Len(t, want, 2, "the snippet's console.log lines say what they print")

	home := t.TempDir()
	var out string
	var before, after string
	testnpm.Locked(t, dir, func() { // npm pack rebuilds dist/
		before = gitStatus(t, root)
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", strings.ReplaceAll(install, "/path/to/sessiongraph/", root+"/"))
		cmd.Dir = home
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", b)
		out = string(b)
		after = gitStatus(t, root)
	})
	require.Equal(t, before, after, "the README's TypeScript path changed the checkout")
	require.NotContains(t, out, "EBADENGINE")
	require.NotRegexp(t, `(?m)^npm (warn|WARN)`, out)

	project := filepath.Join(home, "first-turn")
	entries, err := os.ReadDir(filepath.Join(project, "node_modules"))
	require.NoError(t, err)
	var installed []string
	for _, e := range entries {
		installed = append(installed, e.Name())
	}
	require.Equal(t, []string{".package-lock.json", "@graphql-typed-document-node", "@sessiongraph", "graphql", "graphql-sse", "graphql-ws", "ws"}, installed)
	info, err := os.Lstat(filepath.Join(project, "node_modules", "@sessiongraph", "client"))
	require.NoError(t, err)
	require.True(t, info.IsDir() && info.Mode()&os.ModeSymlink == 0, "the installed client is a copy, not a link into the checkout")
	var manifest struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	b, err := os.ReadFile(filepath.Join(project, "package.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &manifest))
	require.Equal(t, map[string]string{"@sessiongraph/client": "file:sessiongraph-client-0.2.0.tgz"}, manifest.Dependencies)

	require.NoError(t, os.WriteFile(filepath.Join(project, file), []byte(snippet), 0o644))
	s := apitest.New(t)
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", run)
	cmd.Dir = project
	cmd.Env = append(os.Environ(), "SG_URL="+s.URL, "SG_API_KEY="+s.AdminKey)
	b, err = cmd.CombinedOutput()
	require.NoError(t, err, "%s", b)
	require.Equal(t, strings.Join(want, "\n")+"\n", string(b))
}
