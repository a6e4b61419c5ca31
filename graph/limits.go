package graph

import (
	"context"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"sessiongraph/internal/apperr"
	"sessiongraph/internal/config"
)

// Limits bounds what one operation may ask for, checked with the request's
// variables before anything executes (the OWASP GraphQL cheat sheet's depth,
// alias, root-field and cost limits).
type Limits struct {
	config.Limits
	// PageDefault is the page a connection without first or last returns
	// (the complexity of a connection without first or last counts it).
	PageDefault int
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = Limits{}

// ExtensionName implements graphql.HandlerExtension.
func (Limits) ExtensionName() string { return "Limits" }

// Validate implements graphql.HandlerExtension.
func (l Limits) Validate(graphql.ExecutableSchema) error {
	if l.MaxDepth <= 0 || l.MaxAliases <= 0 || l.MaxRootFields <= 0 || l.MaxComplexity <= 0 || l.PageDefault <= 0 {
		return fmt.Errorf("limits: every limit must be positive: %+v", l)
	}
	return nil
}

// MutateOperationContext refuses an operation over any limit, naming it.
func (l Limits) MutateOperationContext(_ context.Context, rc *graphql.OperationContext) *gqlerror.Error {
	m := measure{frags: rc.Doc.Fragments, vars: rc.Variables, page: l.PageDefault}
	cost := m.selection(rc.Operation.SelectionSet, 1, map[string]bool{})
	roots := len(rc.Operation.SelectionSet)
	switch {
	case m.depth > l.MaxDepth:
		return limitError(apperr.QueryTooDeep, "the operation is %d levels deep; at most %d are allowed", m.depth, l.MaxDepth)
	case m.aliases > l.MaxAliases:
		return limitError(apperr.TooManyAliases, "the operation uses %d aliases; at most %d are allowed", m.aliases, l.MaxAliases)
	case roots > l.MaxRootFields:
		return limitError(apperr.TooManyRootFields, "the operation asks for %d root fields; at most %d are allowed: split it", roots, l.MaxRootFields)
	case cost > l.MaxComplexity:
		return limitError(apperr.QueryTooComplex, "the operation may cost %d (a field costs 1, multiplied by the page size of each connection above it); at most %d is allowed: ask for smaller pages or fewer fields", cost, l.MaxComplexity)
	}
	return nil
}

// measure walks an operation for its depth, aliases and cost.
type measure struct {
	frags   ast.FragmentDefinitionList
	vars    map[string]any
	page    int
	depth   int
	aliases int
}

// selection returns the cost of set at depth, following each fragment once
// per path.
func (m *measure) selection(set ast.SelectionSet, depth int, seen map[string]bool) int {
	cost := 0
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if s.Name == "__typename" {
				continue
			}
			m.depth = max(m.depth, depth)
			if s.Alias != "" && s.Alias != s.Name {
				m.aliases++
			}
			children := m.selection(s.SelectionSet, depth+1, seen)
			cost += 1 + children*m.multiplier(s)
		case *ast.InlineFragment:
			cost += m.selection(s.SelectionSet, depth, seen)
		case *ast.FragmentSpread:
			if seen[s.Name] {
				continue
			}
			if def := m.frags.ForName(s.Name); def != nil {
				seen[s.Name] = true
				cost += m.selection(def.SelectionSet, depth, seen)
				delete(seen, s.Name)
			}
		}
	}
	return cost
}

// multiplier is how many nodes a connection field may return.
func (m *measure) multiplier(f *ast.Field) int {
	if !isConnection(f) {
		return 1
	}
	for _, name := range []string{"first", "last"} {
		if n, ok := asInt(argumentValue(f, name, m.vars)); ok && n > 0 {
			return int(n)
		}
	}
	return m.page
}

func limitError(code apperr.Code, format string, args ...any) *gqlerror.Error {
	e := gqlerror.Errorf(format, args...)
	e.Extensions = map[string]any{"code": string(code)}
	return e
}
