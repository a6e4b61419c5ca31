package engine_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/engine"
)

// Every event kind a session records can be asked of sessionsChanged: the
// list of kinds is written by hand, so a kind added to the engine or the
// store without it would be refused as unknown. The kinds are the string
// constants named Kind… in those packages; an API key's revocation is the
// one that belongs to no session.
func TestEveryEventKindOfASessionIsAFeedKind(t *testing.T) {
	declared := map[string]bool{}
	for _, dir := range []string{".", "../store"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
			require.NoError(t, err)
			ast.Inspect(f, func(n ast.Node) bool {
				spec, ok := n.(*ast.ValueSpec)
				if !ok {
					return true
				}
				for i, id := range spec.Names {
					if !strings.HasPrefix(id.Name, "Kind") || i >= len(spec.Values) {
						continue
					}
					if lit, ok := spec.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						kind, err := strconv.Unquote(lit.Value)
						require.NoError(t, err)
						declared[kind] = true
					}
				}
				return true
			})
		}
	}
	require.Greater(t, len(declared), 20, "the kinds were found")
	delete(declared, "apikey.revoked")
	for kind := range declared {
		assert.Contains(t, engine.FeedKinds, kind, "a session event kind sessionsChanged(kinds:) does not accept")
	}
	assert.Len(t, engine.FeedKinds, len(declared), "FeedKinds names a kind nothing declares")
}
