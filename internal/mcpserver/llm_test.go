package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// graphqlOperations are the root fields of the GraphQL schema whose names
// are camelCase: what an MCP error must not name as if it were a tool.
func graphqlOperations(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../../graph/schema/*.graphql")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	block := regexp.MustCompile(`(?s)(?:extend\s+)?type\s+(?:Query|Mutation|Subscription)\s*\{(.*?)\n\}`)
	field := regexp.MustCompile(`(?m)^\s+([a-z]+[A-Z]\w*)\s*[(:]`)
	seen := map[string]bool{}
	for _, f := range files {
		text, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, b := range block.FindAllSubmatch(text, -1) {
			for _, m := range field.FindAllSubmatch(b[1], -1) {
				seen[string(m[1])] = true
			}
		}
	}
	for _, op := range []string{"beginTurn", "endTurn", "failTurn", "recordCreated", "upsertEntityType"} {
		require.True(t, seen[op], "the schema's operations hold %s", op)
	}
	return slices.Sorted(maps.Keys(seen))
}

// speaksMCP checks that an error text over MCP names no GraphQL operation
// as a thing to call: the tools are snake_case, and an operation no tool
// runs is named as GraphQL's. Nor does it speak of Go's reflection or of
// the SDK's schema validation.
func speaksMCP(t *testing.T, ops []string, text string) {
	t.Helper()
	for _, op := range ops {
		bare := strings.ReplaceAll(text, "GraphQL's "+op, "")
		assert.NotRegexp(t, `\b`+op+`\b`, bare, "%q names the GraphQL operation %s", text, op)
	}
	for _, word := range []string{"reflect", "validating", "json:", "Go struct"} {
		assert.NotContains(t, text, word)
	}
}

// An LLM reads an error's hint and calls what it names: over MCP the hint
// names the tool (end_turn), not the GraphQL mutation (endTurn), and an
// operation no tool runs as GraphQL's.
func TestMCPErrorHintsNameTheTools(t *testing.T) {
	s := apitest.New(t)
	ops := graphqlOperations(t)
	cs := connect(t, s, s.AdminKey)
	id := openKitchen(t, cs)
	text := func(tool string, args map[string]any) string {
		t.Helper()
		e := refused(t, cs, tool, args)
		out := e.Code + ": " + e.Message
		speaksMCP(t, ops, out)
		return out
	}

	assert.Equal(t, "NO_OPEN_TURN: session "+id+" has no open turn: begin one first (begin_turn)",
		text("end_turn", map[string]any{"sessionID": id, "assistantMessage": "hello"}))
	assert.Equal(t, "NO_OPEN_TURN: session "+id+" has no open turn: begin one first (begin_turn)",
		text("fail_turn", map[string]any{"sessionID": id, "reason": "no model"}))

	call(t, cs, "begin_turn", map[string]any{"sessionID": id, "userMessage": "plan a dinner"})
	assert.Equal(t, "TURN_IN_PROGRESS: turn 1 is still open: end it (end_turn) or fail it (fail_turn) before beginning another",
		text("begin_turn", map[string]any{"sessionID": id, "userMessage": "and another"}))

	call(t, cs, "record_generated", map[string]any{"sessionID": id, "entityType": "recipe", "content": map[string]any{"name": "Dal"}})
	assert.Equal(t, "REF_PENDING: data.recipe_id is gen_recipe_1, which is generated but not saved yet: save it (record_created) before records that point at it",
		text("translate_payload", map[string]any{"sessionID": id, "entityType": "meal_plan", "data": map[string]any{"recipe_id": "gen_recipe_1"}}))
	assert.Equal(t, "REF_PENDING: filters[0].value is gen_recipe_1, which is generated but not saved yet: save it (record_created) before records that point at it",
		text("translate_filters", map[string]any{"sessionID": id, "entityType": "meal_plan",
			"filters": []any{map[string]any{"field": "recipe_id", "op": "eq", "value": "gen_recipe_1"}}}))

	assert.Equal(t, `UNKNOWN_DOMAIN: domain "mars" has no entity types: load its domain file (-domain-file) or define them (GraphQL's upsertEntityType) first; the domains are kitchen`,
		text("open_session", map[string]any{"tenant": "acme", "externalKey": "on-mars", "domain": "mars"}))
}

// The arguments that take one of a few values say which in the tool's
// schema (an enum), and no argument's type is null: null is no value.
func TestMCPClosedSetsAreEnumsInTheToolSchemas(t *testing.T) {
	s := apitest.New(t)
	schemas := inputSchemas(t, connect(t, s, s.AdminKey))
	enum := func(tool, arg string) any {
		return schemas[tool]["properties"].(map[string]any)[arg].(map[string]any)["enum"]
	}
	assert.Equal(t, []any{"UNDERSTAND", "THINK", "ACT", "REPLY", "MESSAGES"}, enum("build_context", "node"))
	assert.Equal(t, []any{"SLIDING_WINDOW", "SUMMARY"}, enum("build_context", "strategy"))
	assert.Equal(t, []any{"cl100k_base", "o200k_base", "chars4"}, enum("build_context", "tokenizer"))
	assert.Equal(t, []any{"cl100k_base", "o200k_base", "chars4"}, enum("open_session", "tokenizer"))
	assert.Equal(t, map[string]any{"type": "string", "description": "the pipeline node whose context to build",
		"enum": []any{"UNDERSTAND", "THINK", "ACT", "REPLY", "MESSAGES"}},
		schemas["build_context"]["properties"].(map[string]any)["node"])

	for tool, schema := range schemas {
		raw, err := json.Marshal(schema)
		require.NoError(t, err)
		assert.NotContains(t, string(raw), `"null"`, tool)
	}
}

// inputSchemas are the tools' input schemas, as tools/list gives them.
func inputSchemas(t *testing.T, cs *mcp.ClientSession) map[string]map[string]any {
	t.Helper()
	list, err := cs.ListTools(context.Background(), nil)
	require.NoError(t, err)
	out := map[string]map[string]any{}
	for _, tool := range list.Tools {
		raw, err := json.Marshal(tool.InputSchema)
		require.NoError(t, err)
		var schema map[string]any
		require.NoError(t, json.Unmarshal(raw, &schema))
		out[tool.Name] = schema
	}
	return out
}

// sweepSession is a session of tenant acme with a turn open, recipe_1 read
// and gen_meal_plan_1 generated: a state in which every tool's call below
// does what it says.
func sweepSession(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	id := openKitchen(t, cs)
	call(t, cs, "begin_turn", map[string]any{"sessionID": id, "userMessage": "plan a dinner"})
	call(t, cs, "record_read", map[string]any{"sessionID": id, "table": "recipes",
		"records": []any{map[string]any{"id": uuid.NewString(), "name": "Dal Tadka"}}})
	call(t, cs, "record_generated", map[string]any{"sessionID": id, "entityType": "meal_plan",
		"content": map[string]any{"date": "2026-01-12", "meal_type": "dinner", "recipe_id": "recipe_1"}})
	return id
}

// sweepCalls are a call of every tool, with each argument it takes given,
// in a sweepSession.
func sweepCalls(id string) map[string]map[string]any {
	return map[string]map[string]any{
		"open_session": {"tenant": "acme", "externalKey": "sweep-" + uuid.NewString(), "domain": "kitchen", "userID": "u1",
			"systemPrompt": "You plan dinners.", "ttlSeconds": 3600, "metadata": map[string]any{"app": "test"}, "tokenizer": "chars4"},
		"begin_turn": {"sessionID": id, "userMessage": "hello"},
		"end_turn": {"sessionID": id, "assistantMessage": "planned", "summary": map[string]any{"decision": "plan",
			"steps": []any{map[string]any{"step": 1, "kind": "read"}}}},
		"fail_turn": {"sessionID": id, "reason": "the model timed out"},
		"record_items": {"sessionID": id, "turnID": uuid.NewString(),
			"items": []any{`{"type":"function_call","name":"find_recipes","call_id":"call_1","arguments":"{}"}`}},
		"record_read": {"sessionID": id, "entityType": "recipe", "table": "recipes", "step": 1,
			"records": []any{map[string]any{"id": uuid.NewString(), "name": "Chana Masala"}}},
		"record_updated": {"sessionID": id, "entityType": "recipe", "table": "recipes", "step": 1,
			"records": []any{map[string]any{"id": uuid.NewString(), "name": "Chana Masala"}}},
		"record_generated": {"sessionID": id, "entityType": "meal_plan", "label": "Tuesday dinner", "step": 2,
			"content": map[string]any{"date": "2026-01-13", "meal_type": "dinner"}},
		"record_created": {"sessionID": id, "entityType": "meal_plan", "entityID": uuid.NewString(), "label": "Monday dinner",
			"genRef": "gen_meal_plan_1", "step": 3},
		"record_deleted":    {"sessionID": id, "entityType": "recipe", "entityIDs": []any{uuid.NewString()}, "step": 3},
		"retain_ref":        {"sessionID": id, "ref": "recipe_1", "reason": "the user likes it"},
		"release_ref":       {"sessionID": id, "ref": "recipe_1"},
		"resolve_refs":      {"sessionID": id, "refs": []any{"recipe_1"}},
		"translate_payload": {"sessionID": id, "entityType": "meal_plan", "data": map[string]any{"recipe_id": "recipe_1"}},
		"translate_filters": {"sessionID": id, "entityType": "recipe", "table": "recipes",
			"filters": []any{map[string]any{"field": "id", "op": "eq", "value": "recipe_1"}}},
		"read_refs": {"sessionID": id, "refs": []any{"gen_meal_plan_1"}},
		"build_context": {"sessionID": id, "node": "MESSAGES", "turnsWindow": 2, "tokenBudget": 4000, "tokenizer": "chars4",
			"strategy": "SUMMARY", "modelLimit": 5000, "keepRecent": 10},
		"working_memory": {"sessionID": id, "everyNTurns": 5},
		"record_model_call": {"sessionID": id, "node": "THINK", "receiptID": "0193f0c4-0000-7000-8000-000000000001", "model": "gpt-4o",
			"inputTokens": 800, "outputTokens": 90, "latencyMs": 600, "cost": 0.0002, "finishReason": "stop", "error": "timeout"},
	}
}

// outcome is what a call came to, for two calls in two sessions to be
// compared: ok, or the error's code, field and message with the session's
// id in words.
func outcome(t *testing.T, cs *mcp.ClientSession, id, tool string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	require.NoError(t, err)
	if !res.IsError {
		return "ok"
	}
	text := res.Content[0].(*mcp.TextContent).Text
	field, _ := res.Meta["sessiongraph/error"].(map[string]any)["field"].(string)
	return strings.ReplaceAll(text, id, "<session>") + " (field " + field + ")"
}

// Null is no value, for every argument of every tool: an optional one given
// as null is as if absent, and a required one given as null is
// BAD_USER_INPUT naming it, as when it is missing. No answer is the
// decoder's or the schema validator's text.
func TestMCPNullIsAbsentForOptionalArgumentsAndRefusedForRequiredOnes(t *testing.T) {
	s := apitest.New(t)
	ops := graphqlOperations(t)
	cs := connect(t, s, s.AdminKey)
	schemas := inputSchemas(t, cs)
	require.ElementsMatch(t, slices.Collect(maps.Keys(schemas)), slices.Collect(maps.Keys(sweepCalls(""))),
		"the sweep calls every tool")

	for _, tool := range slices.Sorted(maps.Keys(schemas)) {
		schema := schemas[tool]
		var required []string
		for _, r := range schema["required"].([]any) {
			required = append(required, r.(string))
		}
		props := schema["properties"].(map[string]any)
		for _, arg := range slices.Sorted(maps.Keys(props)) {
			t.Run(tool+"/"+arg, func(t *testing.T) {
				id := sweepSession(t, cs)
				args := sweepCalls(id)[tool]
				require.Contains(t, args, arg, "the sweep gives every argument")
				args[arg] = nil
				if slices.Contains(required, arg) {
					e := refused(t, cs, tool, args)
					typ := props[arg].(map[string]any)["type"].(string)
					a := "a"
					if typ == "array" || typ == "object" || typ == "integer" {
						a = "an"
					}
					assert.Equal(t, "BAD_USER_INPUT", e.Code)
					assert.Equal(t, arg, e.Field)
					assert.Equal(t, fmt.Sprintf("%s is required and may not be null: give %s %s", arg, a, typ), e.Message)
					return
				}
				got := outcome(t, cs, id, tool, args)
				speaksMCP(t, ops, got)
				other := sweepSession(t, cs)
				absent := sweepCalls(other)[tool]
				delete(absent, arg)
				assert.Equal(t, outcome(t, cs, other, tool, absent), got, "%s: null is absence", arg)
			})
		}
	}

	// Within an argument too: a field of the summary.
	id := sweepSession(t, cs)
	e := refused(t, cs, "end_turn", map[string]any{"sessionID": id, "assistantMessage": "planned",
		"summary": map[string]any{"steps": []any{map[string]any{"step": nil}}}})
	assert.Equal(t, "BAD_USER_INPUT: summary.steps[0].step is required and may not be null: give an integer (field summary.steps[0].step)",
		e.Code+": "+e.Message+" (field "+e.Field+")")
	out := call(t, cs, "end_turn", map[string]any{"sessionID": id, "assistantMessage": "planned",
		"summary": map[string]any{"decision": nil, "blockedReason": nil, "steps": []any{map[string]any{"step": 1, "kind": nil}}}})
	assert.Equal(t, "COMPLETED", out["turn"].(map[string]any)["status"])
}

// The other ways arguments miss their schema are BAD_USER_INPUT naming
// the argument, in words a model can act on.
func TestMCPArgumentsThatMissTheSchemaNameTheArgument(t *testing.T) {
	s := apitest.New(t)
	ops := graphqlOperations(t)
	cs := connect(t, s, s.AdminKey)
	id := openKitchen(t, cs)
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"begin_turn", map[string]any{"sessionID": id}, "userMessage is required: give a string (field userMessage)"},
		{"begin_turn", map[string]any{"sessionID": id, "userMessage": 5}, "userMessage must be a string, not an integer (field userMessage)"},
		{"begin_turn", map[string]any{"sessionID": id, "userMessage": "hi", "mood": "good"},
			`"mood" is not an argument of this tool; it takes sessionID, userMessage (field mood)`},
		{"build_context", map[string]any{"sessionID": id, "node": "think"},
			`node "think" is not one of UNDERSTAND, THINK, ACT, REPLY, MESSAGES (field node)`},
		{"build_context", map[string]any{"sessionID": id, "node": "THINK", "turnsWindow": 1.5},
			"turnsWindow must be an integer, not a number (field turnsWindow)"},
		{"record_read", map[string]any{"sessionID": id, "table": "recipes", "records": []any{nil}},
			"records[0] must be an object, not null (field records[0])"},
		{"open_session", map[string]any{"tenant": "acme", "externalKey": "k", "metadata": map[string]any{"app": 1}},
			"metadata.app must be a string, not an integer (field metadata.app)"},
	} {
		e := refused(t, cs, c.tool, c.args)
		got := e.Message + " (field " + e.Field + ")"
		assert.Equal(t, "BAD_USER_INPUT", e.Code, got)
		assert.Equal(t, c.want, got)
		speaksMCP(t, ops, got)
	}
}

// A stateless server's tools and resources are the same on every replica
// and for the life of the process: it does not offer to say when they
// change.
func TestMCPStatelessServerDoesNotAdvertiseListChanged(t *testing.T) {
	s := apitest.New(t)
	status, reply, raw := postMCP(t, s, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`)
	require.Equal(t, http.StatusOK, status, "%s", raw)
	require.Nil(t, reply.Error)
	var body struct {
		Result struct {
			Capabilities json.RawMessage `json:"capabilities"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(raw, &body))
	assert.JSONEq(t, `{"tools":{},"resources":{}}`, string(body.Result.Capabilities))
}
