package eventkind_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/eventkind"
)

// The table defines each kind once, and says which are the lifecycle's and
// which belong to no session.
func TestTheTableDefinesEachKindOnce(t *testing.T) {
	kinds, err := eventkind.Table()
	require.NoError(t, err)
	var lifecycle, system []string
	for _, k := range kinds {
		if k.Lifecycle {
			lifecycle = append(lifecycle, k.Name)
		}
		if k.System {
			system = append(system, k.Name)
		}
	}
	assert.Equal(t, []string{"session.opened", "session.updated", "session.expired", "session.deleted"}, lifecycle)
	assert.Equal(t, []string{"apikey.revoked"}, system)
	i := slices.IndexFunc(kinds, func(k eventkind.Kind) bool { return k.Name == "session.opened" })
	require.GreaterOrEqual(t, i, 0)
	assert.Equal(t, eventkind.Kind{Name: "session.opened", Package: "store", Const: "KindSessionOpened", Lifecycle: true, List: true,
		Words: "opened", Payload: []string{"tenant", "externalKey", "replaced?"},
		What: "A session was opened; replaced names the expired session of the same key it replaced."}, kinds[i])
	assert.Equal(t, "REF_USER_ACTION", kinds[slices.IndexFunc(kinds, func(k eventkind.Kind) bool { return k.Name == "ref.user_action" })].Enum())
}

// A malformed row is refused with its line and what is wrong, so `make
// generate` stops before it writes anything.
func TestAMalformedTableIsRefused(t *testing.T) {
	for table, want := range map[string]string{
		"a.b | engine.KindAB | | ab | x": "kinds.txt line 1: 5 columns, want 6",
		"# c\na.b | engine.KindAB | | ab | x | What.\na.b | store.KindAC | | ac | x | What.": "kinds.txt line 3: a.b (KindAC) is defined twice",
		"a.b | graph.KindAB | | ab | x | What.":                                              `constant "graph.KindAB" is not engine.KindX or store.KindX`,
		"a.b | engine.KindAB | live | ab | x | What.":                                        `flag "live" is none of lifecycle, list, system`,
		"a.b | engine.KindAB | system list | ab | x | What.":                                 "a.b belongs to no session, so no feed carries it",
		"a.b | engine.KindAB | | ab | the key | What.":                                       `payload key "the key" of a.b is not a JSON name`,
		"Session.Opened | engine.KindAB | | ab | x | What.":                                  `kind "Session.Opened" is not noun.verb in lower case`,
		"# only comments\n": "kinds.txt defines no kind",
	} {
		_, err := eventkind.Parse(table)
		require.Error(t, err, table)
		assert.Contains(t, err.Error(), want, table)
	}
}

// Every file derived from the table is what the table renders now: a kind
// added to the table without `make generate` fails here as well as in
// `make check-generated`.
func TestTheDerivedFilesAreCurrent(t *testing.T) {
	kinds, err := eventkind.Table()
	require.NoError(t, err)
	files, err := eventkind.Files(kinds)
	require.NoError(t, err)
	require.Len(t, files, 5)
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(path)))
		require.NoError(t, err, path)
		assert.Equal(t, string(want), string(got), "%s is stale: run make generate", path)
	}
}
