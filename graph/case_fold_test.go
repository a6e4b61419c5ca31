package graph_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"

	"sessiongraph/internal/apitest"
)

// Case-folded filters fold as Go's strings.EqualFold does, in PostgreSQL:
// İ matches only İ (ILIKE lowered it to i, and it matched every session
// with an i), i never matches İ, ß and ẞ match each other but not SS, and
// the Kelvin sign matches k.
func TestCaseFoldedFiltersAgreeWithGo(t *testing.T) {
	s := apitest.New(t)
	keys := []string{"ice", "İstanbul", "straße", "STRASSE", "Kelvin", "100%_İ"}
	for _, k := range keys {
		s.MustDo(t, openSession, map[string]any{"in": map[string]any{"tenant": "acme", "externalKey": k}}, nil)
	}
	matching := func(filter, pattern string) []string {
		var out struct {
			Sessions struct {
				Edges []struct {
					Node struct{ ExternalKey string } `json:"node"`
				} `json:"edges"`
			} `json:"sessions"`
		}
		s.MustDo(t, `query($w: SessionWhereInput) { sessions(first: 50, where: $w) { edges { node { externalKey } } } }`,
			map[string]any{"w": map[string]any{filter: pattern}}, &out)
		var got []string
		for _, e := range out.Sessions.Edges {
			got = append(got, e.Node.ExternalKey)
		}
		slices.Sort(got)
		return got
	}
	for _, c := range []struct {
		filter, pattern string
		want            []string
	}{
		{"externalKeyContainsFold", "İ", []string{"100%_İ", "İstanbul"}},
		{"externalKeyContainsFold", "i", []string{"Kelvin", "ice"}},
		{"externalKeyContainsFold", "I", []string{"Kelvin", "ice"}},
		{"externalKeyContainsFold", "ß", []string{"straße"}},
		{"externalKeyContainsFold", "ẞ", []string{"straße"}},
		{"externalKeyContainsFold", "ss", []string{"STRASSE"}},
		{"externalKeyContainsFold", "\u212a", []string{"Kelvin"}}, // the Kelvin sign
		{"externalKeyContainsFold", "%_İ", []string{"100%_İ"}},
		{"externalKeyEqualFold", "İSTANBUL", []string{"İstanbul"}},
		{"externalKeyEqualFold", "istanbul", nil},
		{"externalKeyEqualFold", "ICE", []string{"ice"}},
	} {
		assert.Equal(t, c.want, matching(c.filter, c.pattern), "%s: %q", c.filter, c.pattern)
	}
}
