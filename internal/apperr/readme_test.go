package apperr_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// codes returns every Code constant apperr.go declares, by value.
func codes(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "apperr.go", nil, 0)
	require.NoError(t, err)
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok || spec.Type == nil || len(spec.Values) != 1 {
			return true
		}
		if typ, ok := spec.Type.(*ast.Ident); ok && typ.Name == "Code" {
			lit := spec.Values[0].(*ast.BasicLit)
			v, err := strconv.Unquote(lit.Value)
			require.NoError(t, err)
			out = append(out, v)
		}
		return true
	})
	return out
}

// docs/errors.md's table lists every code the server can answer: a code
// added here and not there fails this test.
func TestTheReadmeListsEveryCode(t *testing.T) {
	readme, err := os.ReadFile("../../docs/errors.md")
	require.NoError(t, err)
	_, table, found := strings.Cut(string(readme), "# Error codes")
	require.True(t, found, "docs/errors.md has no '# Error codes' heading")
	table, _, _ = strings.Cut(table, "\n## ")
	listed := map[string]bool{}
	for _, line := range strings.Split(table, "\n") {
		if first, _, ok := strings.Cut(strings.TrimPrefix(line, "| "), " |"); ok && strings.HasPrefix(line, "| `") {
			for _, m := range regexp.MustCompile("`([A-Z_]+)`").FindAllStringSubmatch(first, -1) {
				listed[m[1]] = true
			}
		}
	}
	all := codes(t)
	require.Greater(t, len(all), 20)
	for _, c := range all {
		assert.True(t, listed[c], "docs/errors.md's error-code table lacks %s", c)
	}
}
