package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"sessiongraph/internal/engine"
)

// matchEverythingWhenEmpty implements @matchEverythingWhenEmpty: it runs on
// each WhereInput as gqlgen unmarshals it (for a resolver's arguments and
// for ent's eager loading of nested connections alike), innermost first,
// so each call looks at its own level only.
func matchEverythingWhenEmpty(ctx context.Context, _ any, next graphql.Resolver) (any, error) {
	v, err := next(ctx)
	if err != nil {
		return v, err
	}
	return engine.MatchEverythingWhenEmptyAtTop(v), nil
}
