package graph_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// A build of an unchanged session is remembered by the session's event
// sequence: asked again it costs the session's read alone. Every kind of
// change the build shows (a read, a turn, a retained ref, a domain's
// legend) gives a fresh build (after a read, a patched one), and other
// options or nodes are builds of their own.
func TestABuildIsRememberedUntilTheSessionChanges(t *testing.T) {
	s := apitest.New(t)
	a := kitchenSession(t, s)
	statements := func(f func()) int64 {
		before := s.Statements()
		f()
		return s.Statements() - before
	}
	first := a.context("THINK", nil)
	var again contextOut
	assert.EqualValues(t, 1, statements(func() { again = a.context("THINK", nil) }), "the session's read, nothing more")
	assert.Equal(t, first, again)

	// Other options and other nodes are other builds.
	small := a.context("THINK", map[string]any{"tokenBudget": 300})
	assert.NotEqual(t, first.Text, small.Text)
	assert.Equal(t, 300, small.Budget)
	assert.NotEqual(t, first.Text, a.context("ACT", nil).Text)

	// A read of a new recipe shows in the next build.
	a.read("recipes", map[string]any{"id": newUUID(), "name": "Lemon Madeleine"})
	afterRead := a.context("THINK", nil)
	assert.Contains(t, afterRead.Text, "Lemon Madeleine")
	// The read changed refs alone, and this replica made it: ACT's build
	// before it is patched with the read's refs, at the cost of the
	// session's read (internal/engine/patchbuild_test.go proves it the build made
	// from the rows).
	var act contextOut
	assert.EqualValues(t, 1, statements(func() { act = a.context("ACT", nil) }), "ACT is patched, with no read of the rows")
	assert.Contains(t, act.Text, "Lemon Madeleine")

	// Retaining a ref, and a turn, show too.
	a.do(`mutation($id: ID!) { retainRef(input: {sessionID: $id, ref: "recipe_1", reason: "the user's favourite"}) { ref { ref } } }`, nil)
	assert.Contains(t, a.context("THINK", nil).Text, "the user's favourite")
	a.turn("what about dessert?")
	assert.Contains(t, a.context("UNDERSTAND", nil).Text, "what about dessert?")

	// A domain's legend is read from the domain the build used.
	s.MustDo(t, `mutation { upsertEntityType(input: {domain: "kitchen", name: "recipe", table: "recipes", labelField: "name",
		dataLegend: "Recipes carry a new legend."}) { entityType { name } } }`, nil, nil)
	assert.Contains(t, a.context("THINK", nil).Text, "Recipes carry a new legend.")

	// Another tenant's key is refused before any build is looked up.
	globex := s.WithKey(s.NewKey(t, "CLIENT", "globex"))
	res := globex.Do(t, contextQuery, map[string]any{"id": a.id, "node": "THINK", "options": nil})
	require.NotEmpty(t, res.Errors)
	assert.Equal(t, "NOT_FOUND", res.Errors[0].Code())
}
