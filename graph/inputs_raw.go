package graph

import (
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
func (c *InputChecks) checkRawVariables(params *graphql.RawParams) *gqlerror.Error {
	if !holdsObjectsOrLists(params.Variables) {
		return nil
	}
	doc, err := parser.ParseQueryWithTokenLimit(&ast.Source{Input: params.Query}, c.TokenLimit)
	if err != nil {
		return nil // gqlgen's own parse says what is wrong
	}
	op := doc.Operations.ForName(params.OperationName)
	if op == nil {
		return nil
	}
	// Gives each field its definition, as validation does, visiting each
	// fragment once per operation; a field the schema lacks keeps none and
	// the walk passes it by (validation refuses it next).
	validator.Walk(c.schema, doc, &validator.Events{})
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
