package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"sessiongraph/internal/apperr"
)

// PageLimits bounds every Relay connection: a page holds at most Max nodes,
// and a connection asked for without first or last gets the first Default.
// ent's Paginate returns every row when given neither, so no connection may
// reach it unbounded, nested ones included.
type PageLimits struct {
	Default int
	Max     int
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = PageLimits{}

// ExtensionName implements graphql.HandlerExtension.
func (PageLimits) ExtensionName() string { return "PageLimits" }

// Validate implements graphql.HandlerExtension.
func (l PageLimits) Validate(graphql.ExecutableSchema) error {
	if l.Default <= 0 || l.Max < l.Default {
		return fmt.Errorf("page limits: need 0 < default (%d) <= max (%d)", l.Default, l.Max)
	}
	return nil
}

// MutateOperationContext checks first and last of every connection in the
// operation, with the request's variables, before anything executes.
func (l PageLimits) MutateOperationContext(_ context.Context, rc *graphql.OperationContext) *gqlerror.Error {
	var bad *gqlerror.Error
	eachConnection(rc.Operation.SelectionSet, rc.Doc.Fragments, map[string]bool{}, func(f *ast.Field) {
		if bad != nil {
			return
		}
		first, last := argumentValue(f, "first", rc.Variables), argumentValue(f, "last", rc.Variables)
		if first == nil && last == nil {
			bad = pageError(f, "%s needs first or last (its variables are null); at most %d", f.Name, l.Max)
			return
		}
		for _, arg := range [...]struct {
			name  string
			value any
		}{{"first", first}, {"last", last}} {
			name := arg.name
			n, ok := asInt(arg.value)
			if !ok {
				continue
			}
			if n < 0 || n > int64(l.Max) {
				bad = pageError(f, "%s on %s is %d; it must be between 0 and %d: page through larger results with after or before",
					name, f.Name, n, l.Max)
				return
			}
		}
	})
	return bad
}

// pageDefaultsCache fills in `first: Default` on every connection field that
// names neither first nor last. gqlgen adds each freshly parsed and validated
// document to the query cache before executing it, and only then shares it,
// so this is the one place a document can be changed safely; ent's eager
// loading of nested connections then sees the same limit as the resolvers.
type pageDefaultsCache struct {
	graphql.Cache[*ast.QueryDocument]
	first int
}

// Add implements graphql.Cache.
func (c pageDefaultsCache) Add(ctx context.Context, key string, doc *ast.QueryDocument) {
	def := strconv.Itoa(c.first)
	fill := func(f *ast.Field) {
		listLiterals(f)
		if f.Arguments.ForName("first") != nil || f.Arguments.ForName("last") != nil {
			return
		}
		argDef := f.Definition.Arguments.ForName("first")
		f.Arguments = append(f.Arguments, &ast.Argument{
			Name:     "first",
			Value:    &ast.Value{Kind: ast.IntValue, Raw: def, ExpectedType: argDef.Type, Position: f.Position},
			Position: f.Position,
		})
	}
	for _, op := range doc.Operations {
		eachConnection(op.SelectionSet, doc.Fragments, map[string]bool{}, fill)
	}
	c.Cache.Add(ctx, key, doc)
}

// listLiterals writes a single value given to a list argument as the list
// of that one value, as GraphQL's input coercion reads it. ent's eager
// loading of nested connections reads arguments from the document and took
// `orderBy: {field: NUMBER}` for no order at all; variables are coerced by
// gqlparser already.
func listLiterals(f *ast.Field) {
	for _, a := range f.Arguments {
		if a.Value == nil || a.Value.Kind == ast.Variable || a.Value.Kind == ast.ListValue || a.Value.Kind == ast.NullValue {
			continue
		}
		if d := f.Definition.Arguments.ForName(a.Name); d != nil && d.Type.Elem != nil {
			one := a.Value
			a.Value = &ast.Value{Kind: ast.ListValue, Children: ast.ChildValueList{{Value: one, Position: one.Position}},
				ExpectedType: d.Type, Definition: one.Definition, Position: one.Position}
		}
	}
}

// eachConnection calls visit for every Relay connection field in set,
// following fragments once each.
func eachConnection(set ast.SelectionSet, frags ast.FragmentDefinitionList, seen map[string]bool, visit func(*ast.Field)) {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			if isConnection(s) {
				visit(s)
			}
			eachConnection(s.SelectionSet, frags, seen, visit)
		case *ast.InlineFragment:
			eachConnection(s.SelectionSet, frags, seen, visit)
		case *ast.FragmentSpread:
			if seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			if def := frags.ForName(s.Name); def != nil {
				eachConnection(def.SelectionSet, frags, seen, visit)
			}
		}
	}
}

func isConnection(f *ast.Field) bool {
	d := f.Definition
	return d != nil && d.Arguments.ForName("first") != nil && d.Arguments.ForName("last") != nil &&
		strings.HasSuffix(d.Type.Name(), "Connection")
}

func asInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case float64:
		return int64(n), true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

func pageError(f *ast.Field, format string, args ...any) *gqlerror.Error {
	e := gqlerror.ErrorPosf(f.Position, format, args...)
	e.Extensions = map[string]any{"code": string(apperr.PaginationLimit)}
	return e
}

// argumentValue is f's argument name as f.ArgumentMap(vars) has it (the
// value given, a variable's value, or else the definition's default; nil
// when none), without making the map of all its arguments.
func argumentValue(f *ast.Field, name string, vars map[string]any) any {
	def := f.Definition.Arguments.ForName(name)
	if def == nil {
		return nil
	}
	if arg := f.Arguments.ForName(name); arg != nil {
		if arg.Value.Kind == ast.Variable {
			if v, ok := vars[arg.Value.Raw]; ok {
				return v
			}
		} else if v, err := arg.Value.Value(vars); err == nil {
			return v
		}
	}
	if def.DefaultValue != nil {
		if v, err := def.DefaultValue.Value(vars); err == nil {
			return v
		}
	}
	return nil
}
