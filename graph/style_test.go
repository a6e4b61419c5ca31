package graph_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"sessiongraph/graph/generated"
)

// mutationStyleViolations lists every mutation that breaks the API style:
// a mutation takes exactly one argument, `input: <Name>Input!` (an input
// object), and returns `<Name>Payload!` (an object), where <Name> is the
// mutation's name capitalized.
func mutationStyleViolations(schema *ast.Schema) []string {
	var out []string
	if schema.Mutation == nil {
		return nil
	}
	for _, f := range schema.Mutation.Fields {
		if strings.HasPrefix(f.Name, "__") {
			continue
		}
		name := strings.ToUpper(f.Name[:1]) + f.Name[1:]
		wantIn, wantOut := name+"Input!", name+"Payload!"
		if len(f.Arguments) != 1 || f.Arguments[0].Name != "input" {
			args := make([]string, len(f.Arguments))
			for i, a := range f.Arguments {
				args[i] = a.Name + ": " + a.Type.String()
			}
			out = append(out, fmt.Sprintf("%s(%s): want the one argument input: %s", f.Name, strings.Join(args, ", "), wantIn))
		} else if in := f.Arguments[0].Type; in.String() != wantIn || schema.Types[in.Name()].Kind != ast.InputObject {
			out = append(out, fmt.Sprintf("%s(input: %s): want input: %s, an input object", f.Name, in, wantIn))
		}
		if f.Type.String() != wantOut || schema.Types[f.Type.Name()].Kind != ast.Object {
			out = append(out, fmt.Sprintf("%s returns %s: want %s, an object", f.Name, f.Type, wantOut))
		}
	}
	return out
}

func TestEveryMutationTakesOneInputAndReturnsItsPayload(t *testing.T) {
	schema := generated.NewExecutableSchema(generated.Config{}).Schema()
	require.NotEmpty(t, schema.Mutation.Fields)
	assert.Empty(t, mutationStyleViolations(schema), "every mutation is name(input: NameInput!): NamePayload!")
}

// The check itself catches each way a new mutation could break the style.
func TestTheStyleCheckFindsEachBreach(t *testing.T) {
	schema, err := gqlparser.LoadSchema(&ast.Source{Name: "breaches.graphql", Input: `
		type Query { ok: Boolean }
		type Thing { id: ID! }
		input GoodInput { id: ID! }
		type GoodPayload { thing: Thing! }
		input PlainArgsInput { id: ID! }
		input OtherInput { id: ID! }
		input NullableInput { id: ID! }
		type BareScalarPayload { ok: Boolean }
		input BareScalarInput { id: ID! }
		input BareTypeInput { id: ID! }
		input NullablePayloadInput { id: ID! }
		type NullablePayloadPayload { thing: Thing }
		type Mutation {
			good(input: GoodInput!): GoodPayload!
			plainArgs(sessionID: ID!, reason: String!): GoodPayload!
			wrongInput(input: OtherInput!): GoodPayload!
			nullable(input: NullableInput): GoodPayload!
			bareScalar(input: BareScalarInput!): Int!
			bareType(input: BareTypeInput!): Thing!
			nullablePayload(input: NullablePayloadInput!): NullablePayloadPayload
		}`})
	require.NoError(t, err)
	assert.Equal(t, []string{
		"plainArgs(sessionID: ID!, reason: String!): want the one argument input: PlainArgsInput!",
		"plainArgs returns GoodPayload!: want PlainArgsPayload!, an object",
		"wrongInput(input: OtherInput!): want input: WrongInputInput!, an input object",
		"wrongInput returns GoodPayload!: want WrongInputPayload!, an object",
		"nullable(input: NullableInput): want input: NullableInput!, an input object",
		"nullable returns GoodPayload!: want NullablePayload!, an object",
		"bareScalar returns Int!: want BareScalarPayload!, an object",
		"bareType returns Thing!: want BareTypePayload!, an object",
		"nullablePayload returns NullablePayloadPayload: want NullablePayloadPayload!, an object",
	}, mutationStyleViolations(schema))
}

// nullableDefaults lists every argument and input field that has a default
// but may be null: an explicit null reaches the resolver as nil instead of
// the default, which workingMemory(everyNTurns: null) dereferenced.
func nullableDefaults(schema *ast.Schema) []string {
	var out []string
	for _, def := range schema.Types {
		if strings.HasPrefix(def.Name, "__") {
			continue
		}
		for _, f := range def.Fields {
			for _, a := range f.Arguments {
				if a.DefaultValue != nil && !a.Type.NonNull {
					out = append(out, fmt.Sprintf("%s.%s(%s: %s = %s)", def.Name, f.Name, a.Name, a.Type, a.DefaultValue))
				}
			}
			if def.Kind == ast.InputObject && f.DefaultValue != nil && !f.Type.NonNull {
				out = append(out, fmt.Sprintf("%s.%s: %s = %s", def.Name, f.Name, f.Type, f.DefaultValue))
			}
		}
	}
	slices.Sort(out)
	return out
}

func TestNoArgumentWithADefaultMayBeNull(t *testing.T) {
	schema := generated.NewExecutableSchema(generated.Config{}).Schema()
	assert.Empty(t, nullableDefaults(schema), "write `name: Type! = default`, so that null is refused and the resolver always gets a value")
}

// Every ent filter input carries @matchEverythingWhenEmpty, so that an empty
// filter matches every row wherever it appears (graph/schema/filters.graphql).
func TestEveryFilterInputMatchesEverythingWhenEmpty(t *testing.T) {
	schema := generated.NewExecutableSchema(generated.Config{}).Schema()
	var filters, without []string
	for name, def := range schema.Types {
		if def.Kind != ast.InputObject || !strings.HasSuffix(name, "WhereInput") {
			continue
		}
		filters = append(filters, name)
		if def.Directives.ForName("matchEverythingWhenEmpty") == nil {
			without = append(without, name)
		}
	}
	assert.NotEmpty(t, filters)
	assert.Empty(t, without, "add `extend input X @matchEverythingWhenEmpty` to graph/schema/filters.graphql")
}
