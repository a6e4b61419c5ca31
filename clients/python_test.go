// Package clients_test runs each client's own test suite against a real
// server: the Python client's pytest here (clients/python/tests), the
// TypeScript client's node tests in typescript_test.go.
package clients_test

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/testpy"
)

// pythonVersion is clients/python's version, in the built files' names.
const pythonVersion = "0.2.0"

// pythonPackage builds clients/python's sdist and, from it, its wheel (python
// -m build, with hatchling from PyPI), then installs the wheel with both
// adapter extras, langgraph and pytest into a fresh venv. It answers the venv's python
// and the folder holding the sdist and the wheel.
func pythonPackage(t *testing.T) (python, dist string) {
	t.Helper()
	src, err := filepath.Abs("python")
	require.NoError(t, err)
	constraints := filepath.Join(src, "constraints.txt")
	python = testpy.Venv(t, constraints, "build", "pytest", "langgraph") // langgraph: docs/adapters.md's LangGraph example
	dist = filepath.Join(t.TempDir(), "dist")
	env := []string{"PIP_CONSTRAINT=" + constraints}
	// No flags: the sdist first, then the wheel built from the sdist, so a
	// file the sdist forgets fails here.
	testpy.Run(t, "", 5*time.Minute, env, python, "-m", "build", "--outdir", dist, src)
	wheel := filepath.Join(dist, "sessiongraph-"+pythonVersion+"-py3-none-any.whl")
	testpy.Run(t, "", 5*time.Minute, env, python, "-m", "pip", "install", "-q", wheel+"[openai-agents,langchain]")
	return python, dist
}

// pytest over clients/python/tests, with the package installed from its
// wheel (not the checkout), against a real server: SG_URL, an ADMIN key, a
// CLIENT key of tenant acme and a CLIENT key of tenant other.
func TestPythonClient(t *testing.T) {
	python, dist := pythonPackage(t)
	t.Run("distributions", func(t *testing.T) { pythonDistributions(t, dist) })
	s := apitest.New(t)
	tests, err := filepath.Abs(filepath.Join("python", "tests"))
	require.NoError(t, err)
	// Run from an empty folder, so that `import sessiongraph` finds the installed package.
	out := typescriptRun(t, t.TempDir(), 10*time.Minute, []string{
		"PYTHONDONTWRITEBYTECODE=1",
		"SG_URL=" + s.URL,
		"SG_ADMIN_KEY=" + s.AdminKey,
		"SG_API_KEY=" + s.NewKey(t, "CLIENT", "acme"),
		"SG_OTHER_KEY=" + s.NewKey(t, "CLIENT", "other"),
	}, python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", filepath.Dir(tests), tests)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	t.Log(lines[len(lines)-1])
}

// pythonDistributions: the sdist and the wheel carry what a team depending on them needs: the
// licence, the typing marker, both adapters, the extras with their version
// ranges, and (the sdist) the tests and the example.
func pythonDistributions(t *testing.T, dist string) {
	wheel, err := zip.OpenReader(filepath.Join(dist, "sessiongraph-"+pythonVersion+"-py3-none-any.whl"))
	require.NoError(t, err)
	defer wheel.Close()
	files := map[string]string{}
	for _, f := range wheel.File {
		r, err := f.Open()
		require.NoError(t, err)
		b, err := io.ReadAll(r)
		require.NoError(t, err)
		r.Close()
		files[f.Name] = string(b)
	}
	info := "sessiongraph-" + pythonVersion + ".dist-info/"
	for _, name := range []string{"sessiongraph/__init__.py", "sessiongraph/py.typed", "sessiongraph/openai_agents.py",
		"sessiongraph/langchain.py", info + "licenses/LICENSE", info + "METADATA"} {
		require.Contains(t, files, name)
	}
	license, err := os.ReadFile(filepath.Join("..", "LICENSE"))
	require.NoError(t, err)
	require.Equal(t, string(license), files[info+"licenses/LICENSE"], "the wheel's licence is the repository's")
	meta := files[info+"METADATA"]
	for _, line := range []string{
		"License-Expression: Apache-2.0",
		"Requires-Dist: httpx<1,>=0.23",
		"Requires-Dist: websockets<17,>=10.4",
		"Provides-Extra: openai-agents",
		"Requires-Dist: openai-agents<1,>=0.24; extra == 'openai-agents'",
		"Provides-Extra: langchain",
		"Requires-Dist: langchain-core<2,>=1.0; extra == 'langchain'",
	} {
		require.Contains(t, meta, line+"\n")
	}

	f, err := os.Open(filepath.Join(dist, "sessiongraph-"+pythonVersion+".tar.gz"))
	require.NoError(t, err)
	defer f.Close()
	gz, err := gzip.NewReader(f)
	require.NoError(t, err)
	tr := tar.NewReader(gz)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		names = append(names, strings.TrimPrefix(h.Name, "sessiongraph-"+pythonVersion+"/"))
	}
	sort.Strings(names)
	for _, name := range []string{"LICENSE", "PKG-INFO", "README.md", "pyproject.toml", "constraints.txt",
		"sessiongraph/client.py", "examples/agent_loop.py", "tests/conftest.py"} {
		require.Contains(t, names, name)
	}
}
