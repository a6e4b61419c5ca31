package mcpserver_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// clientDir holds the node project of the official MCP TypeScript SDK's
// client, pinned in its package-lock.json.
const clientDir = "testdata/mcp-client"

// typescriptSDK installs the pinned @modelcontextprotocol/sdk (npm ci from
// the committed lock) on first use, and again when the lock changed.
func typescriptSDK(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		_, err := exec.LookPath(tool)
		require.NoError(t, err, "%s is needed to run the MCP TypeScript SDK's client: install Node.js 20+ with npm", tool)
	}
	lock, err := os.Stat(filepath.Join(clientDir, "package-lock.json"))
	require.NoError(t, err)
	installed, err := os.Stat(filepath.Join(clientDir, "node_modules", ".package-lock.json"))
	if err == nil && !installed.ModTime().Before(lock.ModTime()) {
		return
	}
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = clientDir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "npm ci in %s:\n%s", clientDir, out)
}

// An agent loop runs through /mcp with a client no one here wrote,
// the official TypeScript SDK's: two turns of read, generate, context, save
// and context again, each node's context with its budget, the resources, and
// errors with the API's codes.
func TestTypeScriptSDKRunsTheAgentLoopOverMCP(t *testing.T) {
	typescriptSDK(t)
	s := apitest.New(t)
	key := s.NewKey(t, "CLIENT", "acme")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "agent-loop.mjs", s.URL, key)
	cmd.Dir = clientDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "node agent-loop.mjs:\n%s", stderr.String())

	var got map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &got), stdout.String())
	for step, want := range map[string]string{
		"server": `{"name":"sessiongraph","title":"sessiongraph","version":"dev"}`,
		"tools": `["begin_turn","build_context","end_turn","fail_turn","open_session","read_refs","record_created",
			"record_deleted","record_generated","record_items","record_model_call","record_read","record_updated","release_ref","resolve_refs","retain_ref",
			"translate_filters","translate_payload","working_memory"]`,
		"opened": `{"created":true,"status":"ACTIVE","currentTurn":0}`,
		"begin1": `{"number":1,"status":"OPEN","userMessage":"Find me an Indian dinner and plan it for Monday"}`,
		"read": `{"records":[{"cuisine":"Indian","id":"recipe_1","name":"Dal Tadka","total_time":40},
			{"cuisine":"Indian","id":"recipe_2","name":"Chana Masala","total_time":35}],
			"refs":[{"ref":"recipe_1","label":"Dal Tadka"},{"ref":"recipe_2","label":"Chana Masala"}]}`,
		"generated": `{"action":"generated","entityType":"meal_plan","label":"2026-01-12 dinner","pending":true,"ref":"gen_meal_plan_1"}`,
		"reply": `{"node":"REPLY","budget":25000,"fits":true,
			"tiers":{"active":["recipe_1","recipe_2"],"generated":["gen_meal_plan_1"],"retained":[]},
			"sections":["entities","generated_content","conversation","execution_outcome"]}`,
		"end1": `{"assistantMessage":"I planned Dal Tadka for Monday dinner. Shall I save it?","number":1,"status":"COMPLETED",
			"userMessage":"Find me an Indian dinner and plan it for Monday"}`,
		"translated": `{"data":{"date":"2026-01-12","meal_type":"dinner","recipe_id":"0190a5b4-0000-7000-8000-000000000001"}}`,
		"created":    `{"promoted":true,"ref":{"action":"created","entityType":"meal_plan","label":"2026-01-12 dinner","pending":false,"ref":"gen_meal_plan_1"}}`,
		"act":        `{"budget":25000,"justSaved":true,"hasUUID":false}`,
		"resolved": `[{"entityID":"0190a5b4-0000-7000-8000-000000000001","entityType":"recipe","pending":false,"ref":"recipe_1"},
			{"entityID":"0190a5b4-0000-7000-8000-0000000000aa","entityType":"meal_plan","pending":false,"ref":"gen_meal_plan_1"}]`,
		"retained": `{"action":"read","activeReason":"the user may want it next week","entityType":"recipe","label":"Chana Masala","pending":false,"ref":"recipe_2"}`,
		"released": `{"action":"read","entityType":"recipe","label":"Chana Masala","pending":false,"ref":"recipe_2"}`,
		"end2":     `{"assistantMessage":"Saved: Monday dinner is Dal Tadka.","number":2,"status":"COMPLETED","userMessage":"Yes, save it"}`,
		"budgets":  `{"UNDERSTAND":8000,"THINK":8000,"ACT":25000,"REPLY":25000,"MESSAGES":102400}`,
		"messages": `[["system","You are a kitchen assistant."],["user","Find me an Indian dinner and plan it for Monday"],
			["assistant","I planned Dal Tadka for Monday dinner. Shall I save it?"],["user","Yes, save it"],
			["assistant","Saved: Monday dinner is Dal Tadka."]]`,
		"templates":     `["sessiongraph://sessions/{sessionID}/context/{node}","sessiongraph://sessions/{sessionID}/working-memory"]`,
		"thinkResource": `{"mimeType":"text/markdown","hasRecipe":true}`,
		"memory": `{"turnCount":2,"recentEntities":[{"entityType":"meal_plan","ref":"gen_meal_plan_1","label":"2026-01-12 dinner","turn":2},
			{"entityType":"recipe","ref":"recipe_2","label":"Chana Masala","turn":1},{"entityType":"recipe","ref":"recipe_1","label":"Dal Tadka","turn":1}],
			"summary":"","shouldSummarize":false}`,
		"unknownRef": `{"text":"REF_NOT_FOUND: this session has no ref \"recipe_9\"",
			"error":{"code":"REF_NOT_FOUND","field":"refs[0]","message":"this session has no ref \"recipe_9\""}}`,
		"turnInProgress": `{"text":"TURN_IN_PROGRESS: turn 3 is still open: end it (end_turn) or fail it (fail_turn) before beginning another",
			"error":{"code":"TURN_IN_PROGRESS","message":"turn 3 is still open: end it (end_turn) or fail it (fail_turn) before beginning another"}}`,
		"missingSession": `{"code":-32602,"message":"MCP error -32602: NOT_FOUND: session 00000000-0000-4000-8000-000000000000 not found"}`,
	} {
		assert.JSONEq(t, want, string(got[step]), step)
	}
}
