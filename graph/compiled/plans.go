package compiled

// Remembered plans: a root page's plan depends on the operation's
// document alone when the operation uses no variable but in its root
// fields' own arguments (a directive's condition, which may also decide
// what a root field merges with, or a nested page's argument would change
// the plan); so does the SQL of its edges when it nests no page (whose
// interceptors' predicates are the request's, rootPage.predicates). gqlgen
// hands every request of the same query text the same parsed document, so
// such a plan is made once per root field of a document and kept; the
// page's own arguments (first, after, orderBy, where), the interceptors'
// predicates of the page and of its nested pages, and the cursors stay
// the request's.

import (
	"sync"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/vektah/gqlparser/v2/ast"
)

// maxRememberedPlans bounds the plans kept: past it, they are forgotten
// all at once and made anew (gqlgen's query cache keeps 1,000 documents).
const maxRememberedPlans = 1000

// rememberedPlan is a root field's plan, or none (nil page) when its
// selection uses variables; edgeSQL is empty unless the page is
// cursorless and nests no page.
type rememberedPlan struct {
	page    *rootPage
	edgeSQL string // the columns of an edge's values, without arguments
}

// planKey is a root field of an operation: the same field (a fragment's)
// may be merged with other fields of the same response key in another
// operation of the document.
type planKey struct {
	op    *ast.OperationDefinition
	field *ast.Field
}

var rememberedPlans = struct {
	sync.RWMutex
	byField map[planKey]rememberedPlan
}{byField: map[planKey]rememberedPlan{}}

// rememberedRootPage is rootPage for the root field f of the operation,
// whose collected selection is sel, remembered when it can be: then the
// plan is shared, to be read and never changed (shared reports it), and
// edgeSQL is the columns of its edges' values when they are fixed.
func (pl planner) rememberedRootPage(f *ast.Field, sel ast.SelectionSet) (p *rootPage, edgeSQL string, shared, ok bool, err error) {
	key := planKey{op: pl.oc.Operation, field: f}
	rememberedPlans.RLock()
	r, known := rememberedPlans.byField[key]
	rememberedPlans.RUnlock()
	if known && r.page != nil {
		return r.page, r.edgeSQL, true, true, nil
	}
	p, ok, err = pl.rootPage(sel)
	if !ok || err != nil || known {
		return p, "", false, ok, err
	}
	if !usesVariables(pl.oc.Operation.SelectionSet, pl.oc.Doc.Fragments, map[string]bool{}, true) {
		r.page = p
		if p.cursorless && !nestsPages(p.node) {
			if sql, ok := p.edgeSQLText(); ok {
				r.edgeSQL = sql
			}
		}
	}
	rememberedPlans.Lock()
	if len(rememberedPlans.byField) >= maxRememberedPlans {
		clear(rememberedPlans.byField)
	}
	rememberedPlans.byField[key] = r
	rememberedPlans.Unlock()
	return p, r.edgeSQL, r.page != nil, true, nil
}

// edgeSQLText is writeEdgeColumns' columns for a row of the sessions
// table as ent's read of the page names it, and false when they have
// arguments.
func (p *rootPage) edgeSQLText() (string, bool) {
	s := entsql.Dialect(dialect.Postgres).Select().From(entsql.Table(sessionType.Table))
	var b entsql.Builder
	b.SetDialect(dialect.Postgres)
	p.writeEdgeColumns(&b, selectorRow(s), nil) // it nests no page
	sql, args := b.Query()
	return sql, len(args) == 0
}

// nestsPages reports whether a node's plan holds a nested page.
func nestsPages(n *nodePlan) bool {
	if n == nil {
		return false
	}
	for _, part := range n.parts {
		if part.page != nil {
			return true
		}
	}
	return false
}

// usesVariables reports whether a selection, its fragments included, names
// a variable in an argument or a directive. At the root (root set) the root
// fields' own arguments do not count: they are the page's, the request's
// each time; a directive there does (it decides what a root field's
// selection merges), and so does anything below the root fields.
func usesVariables(sel ast.SelectionSet, frags ast.FragmentDefinitionList, seen map[string]bool, root bool) bool {
	for _, s := range sel {
		switch s := s.(type) {
		case *ast.Field:
			if (!root && argumentsUseVariables(s.Arguments)) || directivesUseVariables(s.Directives) ||
				usesVariables(s.SelectionSet, frags, seen, false) {
				return true
			}
		case *ast.InlineFragment:
			if directivesUseVariables(s.Directives) || usesVariables(s.SelectionSet, frags, seen, root) {
				return true
			}
		case *ast.FragmentSpread:
			if directivesUseVariables(s.Directives) {
				return true
			}
			if seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			if def := frags.ForName(s.Name); def != nil &&
				(directivesUseVariables(def.Directives) || usesVariables(def.SelectionSet, frags, seen, root)) {
				return true
			}
		}
	}
	return false
}

func directivesUseVariables(ds ast.DirectiveList) bool {
	for _, d := range ds {
		if argumentsUseVariables(d.Arguments) {
			return true
		}
	}
	return false
}

func argumentsUseVariables(args ast.ArgumentList) bool {
	for _, a := range args {
		if valueUsesVariables(a.Value) {
			return true
		}
	}
	return false
}

func valueUsesVariables(v *ast.Value) bool {
	if v == nil {
		return false
	}
	if v.Kind == ast.Variable {
		return true
	}
	for _, c := range v.Children {
		if valueUsesVariables(c.Value) {
			return true
		}
	}
	return false
}
