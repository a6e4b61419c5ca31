package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"sessiongraph/internal/apperr"
)

// introspectionOff refuses __schema and __type before anything runs when
// introspection is off. gqlgen itself would run the operation and fail the
// field with a bare error, which reaches the client as INTERNAL.
type introspectionOff struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = introspectionOff{}

func (introspectionOff) ExtensionName() string                   { return "IntrospectionOff" }
func (introspectionOff) Validate(graphql.ExecutableSchema) error { return nil }

func (introspectionOff) MutateOperationContext(_ context.Context, rc *graphql.OperationContext) *gqlerror.Error {
	if asksSchema(rc.Operation.SelectionSet, rc.Doc.Fragments, map[string]bool{}) {
		return limitError(apperr.IntrospectionDisabled,
			"introspection is turned off on this server (start it with -introspection to turn it on); the schema is in graph/schema")
	}
	return nil
}

// asksSchema reports whether a root selection set, through its fragments,
// asks for __schema or __type (which exist only on the query root).
func asksSchema(set ast.SelectionSet, frags ast.FragmentDefinitionList, seen map[string]bool) bool {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if s.Name == "__schema" || s.Name == "__type" {
				return true
			}
		case *ast.InlineFragment:
			if asksSchema(s.SelectionSet, frags, seen) {
				return true
			}
		case *ast.FragmentSpread:
			if f := frags.ForName(s.Name); f != nil && !seen[s.Name] {
				seen[s.Name] = true
				if asksSchema(f.SelectionSet, frags, seen) {
					return true
				}
			}
		}
	}
	return false
}
