package graph

import (
	"context"
	"fmt"
	"math"

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
	size := m.selection(rc.Operation.SelectionSet)
	roots := len(rc.Operation.SelectionSet)
	switch {
	case size.depth > l.MaxDepth:
		return limitError(apperr.QueryTooDeep, "the operation is %d levels deep; at most %d are allowed", size.depth, l.MaxDepth)
	case size.aliases > l.MaxAliases:
		return limitError(apperr.TooManyAliases, "the operation uses %d aliases; at most %d are allowed", size.aliases, l.MaxAliases)
	case roots > l.MaxRootFields:
		return limitError(apperr.TooManyRootFields, "the operation asks for %d root fields; at most %d are allowed: split it", roots, l.MaxRootFields)
	case size.cost > l.MaxComplexity:
		return limitError(apperr.QueryTooComplex, "the operation may cost %d (a field costs 1, multiplied by the page size of each connection above it); at most %d is allowed: ask for smaller pages or fewer fields", size.cost, l.MaxComplexity)
	}
	return nil
}

// size is what a selection set adds to an operation wherever it stands:
// its cost, how many levels of fields it nests, and its aliases, a
// fragment's counted each time it is spread.
type size struct{ cost, depth, aliases int }

// measure walks an operation for its size, measuring each fragment once: a
// fragment's size does not depend on where it is spread, and following it
// at every spread took time exponential in the document (fragments that
// each spread the next twice).
type measure struct {
	frags ast.FragmentDefinitionList
	vars  map[string]any
	page  int
	defs  map[string]*ast.FragmentDefinition
	sizes map[string]size // the fragments measured
	// measuring holds the fragments being measured, to stop at a cycle.
	measuring map[string]bool
}

// selection returns the size of set.
func (m *measure) selection(set ast.SelectionSet) size {
	var total size
	for _, sel := range set {
		var s size
		switch sel := sel.(type) {
		case *ast.Field:
			if sel.Name == "__typename" {
				continue
			}
			children := m.selection(sel.SelectionSet)
			s = size{cost: add(1, mul(children.cost, m.multiplier(sel))), depth: children.depth + 1, aliases: children.aliases}
			if sel.Alias != "" && sel.Alias != sel.Name {
				s.aliases = add(s.aliases, 1)
			}
		case *ast.InlineFragment:
			s = m.selection(sel.SelectionSet)
		case *ast.FragmentSpread:
			s = m.fragment(sel.Name)
		}
		total = size{cost: add(total.cost, s.cost), depth: max(total.depth, s.depth), aliases: add(total.aliases, s.aliases)}
	}
	return total
}

// fragment returns the size of the fragment name, measured at its first
// spread. An unknown fragment, or one spread inside itself (validation
// refuses both), counts nothing.
func (m *measure) fragment(name string) size {
	if s, ok := m.sizes[name]; ok {
		return s
	}
	if m.defs == nil {
		m.defs = make(map[string]*ast.FragmentDefinition, len(m.frags))
		for _, def := range m.frags {
			m.defs[def.Name] = def
		}
		m.sizes, m.measuring = map[string]size{}, map[string]bool{}
	}
	def := m.defs[name]
	if def == nil || m.measuring[name] {
		return size{}
	}
	m.measuring[name] = true
	s := m.selection(def.SelectionSet)
	delete(m.measuring, name)
	m.sizes[name] = s
	return s
}

// saturated is where a size stops growing: fragments that each spread the
// next twice, 64 deep, count past any int.
const saturated = math.MaxInt64 / 2

func add(a, b int) int {
	if a > saturated-b {
		return saturated
	}
	return a + b
}

func mul(a, b int) int {
	if a != 0 && b > saturated/a {
		return saturated
	}
	return a * b
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
