package graph

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2"

	"sessiongraph/graph/generated"
)

// measureOf measures the one operation of query, validated against the
// schema, with the default page of 10.
func measureOf(t *testing.T, query string) size {
	t.Helper()
	doc, errs := gqlparser.LoadQuery(generated.NewExecutableSchema(generated.Config{}).Schema(), query)
	require.Empty(t, errs)
	m := measure{frags: doc.Fragments, page: 10}
	return m.selection(doc.Operations[0].SelectionSet)
}

// A fragment counts at each of its spreads, multiplied by the pages above
// that spread, exactly as the same query with the fragment written out.
func TestAFragmentCostsWhatItsTextWrittenOutCosts(t *testing.T) {
	const refs = `refs(first: 4) { totalCount edges { node { ref } } }` // 1 + 4 × (1 + 1 + 2) = 17
	const session = `id turns(first: 3) { edges { node { number session { id } } } } ` + refs + " " + refs
	spread := measureOf(t, `{
		sessions(first: 5) { edges { node { ...A } } }
		two: sessions(first: 2) { edges { node { ...A } } }
	}
	fragment A on Session { id turns(first: 3) { edges { node { number ...B } } } ...C ...C }
	fragment B on Turn { session { id } }
	fragment C on Session { `+refs+` }`)
	written := measureOf(t, `{
		sessions(first: 5) { edges { node { `+session+` } } }
		two: sessions(first: 2) { edges { node { `+session+` } } }
	}`)
	// A session node: id 1, turns 1 + 3 × (1 + 1 + 1 + 2) = 16, refs 17 twice:
	// 51; sessions(first: 5) 1 + 5 × (1 + 1 + 51), two 1 + 2 × 53.
	assert.Equal(t, size{cost: 266 + 107, depth: 8, aliases: 1}, spread)
	assert.Equal(t, written, spread)
}

// doublingFragments is a query of levels fragments, each spreading the
// next twice, the last asking for leaf: a kilobyte or two of text whose
// selection, written out, holds 2^levels leaves.
func doublingFragments(levels int, leaf string) string {
	var b strings.Builder
	b.WriteString("{ ...F0 }\n")
	for i := range levels {
		fmt.Fprintf(&b, "fragment F%d on Query { ...F%d ...F%d }\n", i, i+1, i+1)
	}
	fmt.Fprintf(&b, "fragment F%d on Query { %s }\n", levels, leaf)
	return b.String()
}

// DoublingFragments is doublingFragments, for the tests of graph_test.
var DoublingFragments = doublingFragments

// Each fragment is measured once, so a document whose fragments each spread
// the next twice is measured as fast as it is read, at a cost that grows
// as its selection does and stops growing where an int would overflow.
func TestFragmentsSpreadTwiceAreMeasuredOnce(t *testing.T) {
	leaf := `sessions(first: 3) { totalCount }` // 1 + 3 × 1
	assert.Equal(t, size{cost: 4 << 10, depth: 2}, measureOf(t, doublingFragments(10, leaf)))
	assert.Equal(t, size{cost: 4 << 40, depth: 2}, measureOf(t, doublingFragments(40, leaf)))
	assert.Equal(t, size{cost: saturated, depth: 2}, measureOf(t, doublingFragments(80, leaf)))
	assert.Equal(t, size{cost: saturated, depth: 2, aliases: saturated}, measureOf(t, doublingFragments(80, `a: sessions(first: 3) { totalCount }`)))
}
