package mcpserver_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
	"sessiongraph/internal/mcpserver"
)

// A runtime on MCP builds THINK (its CLIENT key's build is recorded, with
// -record-contexts), calls
// its model and records the call on that build by session and node, passing
// the same checks as GraphQL's recordModelCall: another tenant's session is
// NOT_FOUND, a READER key may not write, a bad report changes nothing.
func TestMCPRecordsTheModelCallABuildFed(t *testing.T) {
	s := apitest.New(t, func(c *app.Config) { c.RecordContexts = []string{"THINK"} })
	runtime := connect(t, s, s.NewKey(t, "CLIENT", "acme"))
	id := openKitchen(t, runtime)
	call(t, runtime, "begin_turn", map[string]any{"sessionID": id, "userMessage": "plan dinner"})
	call(t, runtime, "build_context", map[string]any{"sessionID": id, "node": "THINK"})

	report := map[string]any{"sessionID": id, "node": "THINK", "model": "gpt-4o-mini", "inputTokens": 812, "outputTokens": 95,
		"latencyMs": 640, "cost": 0.000179, "finishReason": "stop"}
	out := call(t, runtime, "record_model_call", report)
	require.NoError(t, uuid.Validate(out["id"].(string)))
	require.NoError(t, uuid.Validate(out["receiptID"].(string)))
	delete(out, "id")
	delete(out, "receiptID")
	assert.Equal(t, map[string]any{"turn": 1.0, "node": "THINK", "model": "gpt-4o-mini", "inputTokens": 812.0, "outputTokens": 95.0,
		"latencyMs": 640.0, "cost": 0.000179, "finishReason": "stop"}, out)

	globex := connect(t, s, s.NewKey(t, "CLIENT", "globex"))
	assert.Equal(t, mcpserver.Error{Code: "NOT_FOUND", Message: "session " + id + " not found"}, refused(t, globex, "record_model_call", report))
	reader := connect(t, s, s.NewKey(t, "READER", "acme"))
	assert.Equal(t, "FORBIDDEN", refused(t, reader, "record_model_call", report).Code)
	bad := map[string]any{}
	for k, v := range report {
		bad[k] = v
	}
	bad["latencyMs"] = -3
	assert.Equal(t, mcpserver.Error{Code: "BAD_USER_INPUT", Message: "latencyMs is -3; it must be between 0 and 86400000", Field: "latencyMs"},
		refused(t, runtime, "record_model_call", bad))
	bad["latencyMs"], bad["node"] = 1, "REPLY"
	assert.Equal(t, "NOT_FOUND", refused(t, runtime, "record_model_call", bad).Code)

	var totals struct {
		Session struct {
			ModelCallTotals struct {
				Calls     int     `json:"calls"`
				LatencyMs int     `json:"latencyMs"`
				Cost      float64 `json:"cost"`
			} `json:"modelCallTotals"`
		} `json:"session"`
	}
	s.MustDo(t, `query($id: ID!) { session(id: $id) { modelCallTotals { calls latencyMs cost } } }`, map[string]any{"id": id}, &totals)
	assert.Equal(t, 1, totals.Session.ModelCallTotals.Calls)
	assert.Equal(t, 640, totals.Session.ModelCallTotals.LatencyMs)
	assert.Equal(t, 0.000179, totals.Session.ModelCallTotals.Cost)
}
