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
	pages := PageLimits{Default: 20, Max: 100}
	limits := Limits{MaxDepth: 15, MaxAliases: 30, MaxRootFields: 20, MaxComplexity: 50000, PageDefault: 20}
	f.Fuzz(func(t *testing.T, query string) {
		doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: query}, 15000)
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
