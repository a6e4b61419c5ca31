package engine_test

import (
	"testing"

	"sessiongraph/ent"
	"sessiongraph/internal/engine"
)

func nestedOrFilter(depth int) *ent.SessionWhereInput {
	if depth == 0 {
		k := "k"
		return &ent.SessionWhereInput{ExternalKey: &k}
	}
	return &ent.SessionWhereInput{Or: []*ent.SessionWhereInput{nestedOrFilter(depth - 1), nestedOrFilter(depth - 1)}}
}

// BenchmarkMatchEverythingWhenEmptyNestedOr builds a filter of 2^8
// predicates the way a request does: gqlgen calls the directive on every
// nested filter, innermost first.
func BenchmarkMatchEverythingWhenEmptyNestedOr(b *testing.B) {
	for range b.N {
		var visit func(*ent.SessionWhereInput)
		visit = func(w *ent.SessionWhereInput) {
			for _, c := range w.Or {
				visit(c)
			}
			engine.MatchEverythingWhenEmptyAtTop(w)
		}
		visit(nestedOrFilter(8))
	}
}
