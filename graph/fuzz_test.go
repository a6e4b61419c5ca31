package graph

import (
	"context"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"

	"sessiongraph/graph/generated"
	"sessiongraph/internal/access"
	"sessiongraph/internal/config"
)

// FuzzQueryText runs arbitrary query text through everything of ours that
// sees it before execution: parsing and validation against the schema,
// filling in default page sizes, and the page and operation limits. None of
// it may panic.
func FuzzQueryText(f *testing.F) {
	for _, q := range []string{
		`{ sessions { edges { node { id turns { edges { node { number } } } } } } }`,
		`query($n: Int) { sessions(first: $n) { totalCount } }`,
		`{ a: sessions(last: 5) { totalCount } b: node(id: "x") { id } }`,
		`fragment F on Session { refs { edges { node { ref } } } } { sessions(first: 3) { edges { node { ...F ...F } } } }`,
		`{ sessions(first: 1) { edges { node { ... on Session { events(first: 2) { totalCount } } } } } }`,
		`subscription { sessionEvents(sessionID: "x") { sequence } }`,
		`{ __schema { types { name fields { type { ofType { ofType { name } } } } } } }`,
	} {
		f.Add(q)
	}
	schema := generated.NewExecutableSchema(generated.Config{Resolvers: &Resolver{}}).Schema()
	d := config.Defaults()
	pages := PageLimits{Default: d.PageDefault, Max: d.PageMax}
	limits := Limits{Limits: d.Limits, PageDefault: d.PageDefault}
	f.Fuzz(func(t *testing.T, query string) {
		doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, d.TokenLimit)
		if err != nil {
			return
		}
		if errs := validator.Validate(schema, doc); len(errs) > 0 {
			return
		}
		ctx := access.System(context.Background())
		pageDefaultsCache{Cache: graphql.NoCache[*ast.QueryDocument]{}, first: pages.Default}.Add(ctx, query, doc)
		for _, op := range doc.Operations {
			rc := &graphql.OperationContext{Doc: doc, Operation: op, Variables: map[string]any{"n": int64(5)}}
			pages.MutateOperationContext(ctx, rc)
			limits.MutateOperationContext(ctx, rc)
		}
	})
}
