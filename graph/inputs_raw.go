package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
)

// checkRawVariables runs InputChecks' walk over the variables as the
// request holds them, before gqlgen parses the query for good and gqlparser
// coerces the variables: coercion visits every field of an input object's
// type (208 for a SessionWhereInput), 50 to 80 µs an object, so 690,000
// empty objects in a where's or (2 MB) took 26 s of CPU before any limit
// after it refused them. gqlgen runs this for every transport (POST, GET,
// SSE, WebSocket): it is an OperationParameterMutator, which runs before
// its executor parses anything.
//
// Only variables that hold objects or lists cost coercion anything, so a
// request without them is not parsed here.
func (c *InputChecks) checkRawVariables(ctx context.Context, params *graphql.RawParams) *gqlerror.Error {
	if !holdsObjectsOrLists(params.Variables) {
		return nil
	}
	// A query gqlgen has parsed and validated before is in its query cache
	// (by its text, with its fields' definitions): an agent sends the same
	// few operations again and again, and parsing one was most of this
	// check's allocations. The walk only reads the document.
	var doc *ast.QueryDocument
	if c.Documents != nil {
		doc, _ = c.Documents.Get(ctx, params.Query)
	}
	if doc == nil {
		var err error
		if doc, err = parser.ParseQueryWithTokenLimit(&ast.Source{Input: params.Query}, c.TokenLimit); err != nil {
			return nil // gqlgen's own parse says what is wrong
		}
		// Gives each field its definition, as validation does, visiting
		// each fragment once per operation; a field the schema lacks keeps
		// none and the walk passes it by (validation refuses it next).
		validator.Walk(c.schema, doc, &validator.Events{})
	}
	op := doc.Operations.ForName(params.OperationName)
	if op == nil {
		return nil
	}
	w := inputWalk{schema: c.schema, frags: doc.Fragments, vars: params.Variables}
	w.selection(op.SelectionSet)
	return w.err
}

func holdsObjectsOrLists(vars map[string]any) bool {
	for _, v := range vars {
		switch v.(type) {
		case map[string]any, []any:
			return true
		}
	}
	return false
}
