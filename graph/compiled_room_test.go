package graph_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// A page reserves room for its rows from its first row, and a client
// chooses how many rows it asks for: a first row of a megabyte times the
// hundred rows a page may ask for must not become a reservation of a
// hundred megabytes a request when one row exists.
func TestAPageAskingForManyRowsReservesOnlyWhatItsRowsTake(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "room-large-prompt")
	prompt := strings.Repeat("a long system prompt ", 45_000) // 945 KB, under the 1 MiB a text may hold
	a.do(`mutation($id: ID!, $prompt: String!) { updateSession(input: {id: $id, systemPrompt: $prompt}) { session { id } } }`,
		map[string]any{"prompt": prompt})

	for _, q := range []string{
		`{ sessions(first: 100) { edges { node { systemPrompt } } } }`,        // cursorless: 100 × 945 KB by the first row
		`{ sessions(first: 100) { edges { cursor node { systemPrompt } } } }`, // with cursors
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r := s.Do(t, q, nil)
		runtime.ReadMemStats(&after)
		require.Empty(t, r.Errors, "%s", q)
		require.Contains(t, string(r.Body), prompt[:100])
		allocated := after.TotalAlloc - before.TotalAlloc
		require.Less(t, allocated, uint64(64<<20), "%s allocated %d MB for one session's page", q, allocated>>20)
	}
}
