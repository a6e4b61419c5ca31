package graph_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/ast"

	"sessiongraph/ent"
	"sessiongraph/ent/intercept"
	"sessiongraph/ent/turn"
	"sessiongraph/graph/generated"
)

// The compiled plan (ent.CompiledTypes) is generated from ent/schema: every
// field ent's GraphQL schema gives a type has its column there, its JSON
// kind is the one gqlgen's marshaller of the field's GraphQL type writes,
// and every connection is there. A column the plan cannot write must be
// listed here, so that none falls back to gqlgen unseen.
func TestCompiledPlanHasEveryFieldOfEveryType(t *testing.T) {
	uncompiled := map[string][]string{ // JSON of shapes other than StringMap
		"Artifact":       {"content"},
		"ContextReceipt": {"node", "sections", "tiers", "notes"},
		"EntityType":     {"fkFields", "nestedRelations", "detailFields", "contentMarkers"},
		"Event":          {"payload"},
		// node is a Go enum type and cost a numeric; a model call is no
		// compiled page's row (it has no connection).
		"ModelCall":  {"node", "cost"},
		"Session":    {"focus", "pendingClarification"},
		"StepResult": {"data", "refs"},
		"Turn":       {"executionSummary"},
	}
	// What gqlgen's marshaller of each GraphQL type writes (gqlgen.yml binds
	// the scalars): a JSON string, the value's text, a time, an object.
	kindOf := map[string]ent.CompiledKind{
		"ID": ent.CompiledString, "UUID": ent.CompiledString, "String": ent.CompiledString,
		"Int": ent.CompiledNumber, "Boolean": ent.CompiledNumber,
		"Time": ent.CompiledTime, "StringMap": ent.CompiledStringMap,
	}
	schema := generated.NewExecutableSchema(generated.Config{}).Schema()
	types := 0
	for _, def := range schema.Types {
		if def.Kind != ast.Object || def.Position == nil || !strings.HasSuffix(def.Position.Src.Name, "ent.graphql") ||
			!implementsNode(def) {
			continue
		}
		types++
		ct := ent.CompiledTypes[def.Name]
		require.NotNil(t, ct, "%s has no compiled plan", def.Name)
		for _, f := range def.Fields {
			if f.Position == nil || !strings.HasSuffix(f.Position.Src.Name, "ent.graphql") {
				continue // a resolver of a schema extension, not a column
			}
			ft := schema.Types[f.Type.Name()]
			switch {
			case strings.HasSuffix(ft.Name, "Connection") && len(f.Arguments) > 0:
				assert.Contains(t, ct.Connections, f.Name, "%s.%s is a connection without a compiled page", def.Name, f.Name)
			case ft.Kind == ast.Scalar || ft.Kind == ast.Enum || (ft.Kind == ast.Object && !implementsNode(ft)):
				c, ok := ct.Fields[f.Name]
				if !assert.True(t, ok, "%s.%s has no compiled column", def.Name, f.Name) {
					continue
				}
				want, known := kindOf[ft.Name]
				if ft.Kind == ast.Enum {
					want, known = ent.CompiledString, true
				}
				if contains(uncompiled[def.Name], f.Name) {
					assert.Equal(t, ent.CompiledNone, c.Kind, "%s.%s is listed as left to gqlgen", def.Name, f.Name)
					continue
				}
				require.True(t, known, "%s.%s is of %s, which no compiled kind writes: list it above", def.Name, f.Name, ft.Name)
				assert.Equal(t, want, c.Kind, "%s.%s of %s", def.Name, f.Name, ft.Name)
			}
		}
	}
	assert.Equal(t, len(ent.CompiledTypes), types, "every compiled type is a GraphQL type of ent")
}

func implementsNode(def *ast.Definition) bool {
	for _, i := range def.Interfaces {
		if i == "Node" {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// The nested pages of every connection a session has are compiled, each
// field written as gqlgen writes it, in the page's one statement.
func TestCompiledReadsAnswerEveryNestedConnectionAsGqlgenDoes(t *testing.T) {
	p := newCompiledPair(t)
	compiledFixture(t, p.on)
	var pages []string
	for name, conn := range ent.CompiledTypes["Session"].Connections {
		var fields []string
		for _, f := range leafFields(t, conn.Node) {
			if c, ok := ent.CompiledTypes[conn.Node].Fields[f]; ok && c.Kind != ent.CompiledNone {
				fields = append(fields, f)
			}
		}
		pages = append(pages, fmt.Sprintf("%s(first: 5) { totalCount pageInfo { hasNextPage } edges { node { %s } } }", name, strings.Join(fields, " ")))
	}
	q := fmt.Sprintf(`{ sessions(first: 100, orderBy: {field: CREATED_AT, direction: DESC}) { edges { node { id %s } } } }`, strings.Join(pages, " "))
	assert.EqualValues(t, 1, p.same(t, p.on.AdminKey, q, nil))
}

// A row policy added to a type's queries (a Traverse interceptor) holds in
// the compiled nested pages as in ent's own: the nested page applies the
// predicates the interceptors add, so a failed turn hidden by one is
// hidden both ways, from the nodes and from the counts.
func TestCompiledNestedPagesApplyTheInterceptorsPredicates(t *testing.T) {
	p := newCompiledPair(t)
	compiledFixture(t, p.on)
	query := `{ sessions(first: 100, where: {externalKey: "compiled-rich"}) { edges { node {
		turns(first: 10) { totalCount pageInfo { hasNextPage } edges { node { number status } } } } } } }`
	before := string(p.on.Do(t, query, nil).Body)
	require.Contains(t, before, `"FAILED"`)
	for _, c := range []*ent.Client{p.on.Client, p.off.Client} {
		c.Turn.Intercept(intercept.TraverseTurn(func(_ context.Context, q *ent.TurnQuery) error {
			q.Where(turn.StatusNEQ(turn.StatusFailed))
			return nil
		}))
	}
	assert.EqualValues(t, 1, p.same(t, p.on.AdminKey, query, nil), "still one statement")
	after := string(p.on.Do(t, query, nil).Body)
	assert.NotContains(t, after, `"FAILED"`)
	assert.Contains(t, after, `"totalCount":2`)
}

// An interceptor that does more than add predicates (it wraps the query
// itself) cannot be applied inside the compiled statement: a page that
// nests its type is left to gqlgen, with the same answer.
func TestCompiledReadsLeaveATypeWithAWrappingInterceptorToGqlgen(t *testing.T) {
	p := newCompiledPair(t)
	compiledFixture(t, p.on)
	query := `{ sessions(first: 100) { edges { node { id turns(first: 10) { totalCount edges { node { number } } } } } } }`
	require.EqualValues(t, 1, p.same(t, p.on.AdminKey, query, nil), "compiled before")
	for _, c := range []*ent.Client{p.on.Client, p.off.Client} {
		c.Turn.Intercept(ent.InterceptFunc(func(next ent.Querier) ent.Querier { return next }))
	}
	assert.Greater(t, p.same(t, p.on.AdminKey, query, nil), int64(1), "gqlgen's statements")
}
