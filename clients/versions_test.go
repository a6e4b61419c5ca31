package clients_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// Both clients carry one semantic version, the newest CHANGELOG.md names:
// pyproject.toml, sessiongraph.__version__, package.json and the built
// files' names (pythonVersion) never drift apart.
func TestClientVersionsAgreeWithTheChangelog(t *testing.T) {
	read := func(path string) string {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		return string(b)
	}
	find := func(re, text, what string) string {
		m := regexp.MustCompile(re).FindStringSubmatch(text)
		require.NotNil(t, m, "no version in %s", what)
		return m[1]
	}
	changelog := find(`(?m)^## (\d+\.\d+\.\d+)\b`, read(filepath.Join("..", "CHANGELOG.md")), "CHANGELOG.md")
	require.Equal(t, pythonVersion, changelog)
	require.Equal(t, changelog, find(`(?m)^version = "([^"]+)"`, read(filepath.Join("python", "pyproject.toml")), "pyproject.toml"))
	require.Equal(t, changelog, find(`(?m)^__version__ = "([^"]+)"`, read(filepath.Join("python", "sessiongraph", "__init__.py")), "__init__.py"))
	var pkg struct {
		Version string `json:"version"`
		License string `json:"license"`
	}
	require.NoError(t, json.Unmarshal([]byte(read(filepath.Join("typescript", "package.json"))), &pkg))
	require.Equal(t, changelog, pkg.Version)
	require.Equal(t, "Apache-2.0", pkg.License)
	require.Contains(t, read(filepath.Join("..", "LICENSE")), "Apache License\n                           Version 2.0, January 2004")
}
