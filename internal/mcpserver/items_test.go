package mcpserver_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/mcpserver"
)

// Items recorded over MCP pass the mutation's checks and come back from
// GraphQL byte for byte, between the turn's own messages.
func TestRecordItemsOverMCPKeepsEachItemsJSON(t *testing.T) {
	s := apitest.New(t)
	cs := connect(t, s, s.AdminKey)
	id := openKitchen(t, cs)
	call(t, cs, "begin_turn", map[string]any{"sessionID": id, "userMessage": "weather in Paris?"})
	items := []any{
		`{"type":"function_call","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"}`,
		`{"type": "function_call_output", "call_id": "call_1", "output": "18\u00b0C"}`,
	}
	out := call(t, cs, "record_items", map[string]any{"sessionID": id, "items": items})
	assert.Equal(t, []any{
		map[string]any{"position": 2.0, "kind": "FUNCTION_CALL", "json": items[0]},
		map[string]any{"position": 3.0, "kind": "FUNCTION_CALL_OUTPUT", "json": items[1]},
	}, out["items"])

	e := refused(t, cs, "record_items", map[string]any{"sessionID": id, "items": []any{`{"type":"function_call_output","output":"x"}`}})
	assert.Equal(t, mcpserver.Error{Code: "BAD_USER_INPUT", Field: "items[0].call_id",
		Message: "items[0] is a function_call_output without a call_id: name the call it answers"}, e)
	assert.Equal(t, "BAD_USER_INPUT", refused(t, cs, "record_items", map[string]any{"sessionID": id, "items": nil}).Code,
		"a null list records nothing")

	var got struct {
		Session struct {
			Turns struct {
				Edges []struct {
					Node struct{ Items []struct{ JSON string } }
				}
			}
		}
	}
	s.MustDo(t, `query($id: ID!) { session(id: $id) { turns(first: 1) { edges { node { items { json } } } } } }`, map[string]any{"id": id}, &got)
	require.Len(t, got.Session.Turns.Edges, 1)
	var jsons []any
	for _, it := range got.Session.Turns.Edges[0].Node.Items {
		jsons = append(jsons, it.JSON)
	}
	assert.Equal(t, append([]any{`{"type":"message","role":"user","content":"weather in Paris?"}`}, items...), jsons)
}
