package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
	"sessiongraph/internal/engine"
)

// Bad input gets the API's stable codes over MCP, naming the field, and
// leaves the session as it was: the same checks as GraphQL's, before the
// engine opens a transaction.
func TestMCPBadInputGetsTheAPIsCodes(t *testing.T) {
	s := apitest.New(t)
	cs := connect(t, s, s.AdminKey)
	id := openKitchen(t, cs)
	records := make([]map[string]any, engine.MaxListItems+1)
	for i := range records {
		records[i] = map[string]any{"id": uuid.NewString(), "name": "r"}
	}
	for name, c := range map[string]struct {
		tool  string
		args  map[string]any
		code  string
		field string
	}{
		"malformed session id":     {"begin_turn", map[string]any{"sessionID": "nope", "userMessage": "hi"}, "INVALID_ID", "sessionID"},
		"missing argument":         {"begin_turn", map[string]any{"sessionID": id}, "BAD_USER_INPUT", "userMessage"},
		"argument of a wrong type": {"begin_turn", map[string]any{"sessionID": id, "userMessage": 5}, "BAD_USER_INPUT", "userMessage"},
		"unknown entity type": {"record_generated", map[string]any{"sessionID": id, "entityType": "spaceship",
			"content": map[string]any{"name": "x"}}, "UNKNOWN_ENTITY_TYPE", ""},
		"unknown node":    {"build_context", map[string]any{"sessionID": id, "node": "PLAN"}, "BAD_USER_INPUT", "node"},
		"NUL in a string": {"begin_turn", map[string]any{"sessionID": id, "userMessage": "a\x00b"}, "BAD_USER_INPUT", "userMessage"},
		"string over the limit": {"begin_turn", map[string]any{"sessionID": id,
			"userMessage": strings.Repeat("a", engine.MaxTextBytes+1)}, "INPUT_TOO_LARGE", "userMessage"},
		"list over the limit": {"record_read", map[string]any{"sessionID": id, "table": "recipes", "records": records},
			"INPUT_TOO_LARGE", "records"},
		"budget out of range": {"build_context", map[string]any{"sessionID": id, "node": "ACT", "tokenBudget": 1}, "BAD_USER_INPUT", "tokenBudget"},
	} {
		t.Run(name, func(t *testing.T) {
			e := refused(t, cs, c.tool, c.args)
			assert.Equal(t, c.code, e.Code, e.Message)
			assert.Equal(t, c.field, e.Field, e.Message)
			assert.NotEmpty(t, e.Message)
		})
	}
	row, err := s.Engine.Sessions.Session(access.System(context.Background()), uuid.MustParse(id))
	require.NoError(t, err)
	assert.Equal(t, 0, row.CurrentTurn, "no refused call opened a turn")
	refs, err := row.QueryRefs().Count(access.System(context.Background()))
	require.NoError(t, err)
	assert.Equal(t, 0, refs, "no refused call registered a ref")
}

// An expired session refuses writes with SESSION_EXPIRED, over MCP as over
// GraphQL; opening its key again opens a fresh session that replaces it.
func TestMCPExpiredSessionRefusesWrites(t *testing.T) {
	s := apitest.New(t)
	cs := connect(t, s, s.AdminKey)
	opened := call(t, cs, "open_session", map[string]any{"tenant": "acme", "externalKey": "expiring"})
	id := opened["session"].(map[string]any)["id"].(string)
	_, err := s.Engine.Sessions.ExpireSession(access.System(context.Background()), uuid.MustParse(id))
	require.NoError(t, err)

	e := refused(t, cs, "begin_turn", map[string]any{"sessionID": id, "userMessage": "still there?"})
	assert.Equal(t, "SESSION_EXPIRED", e.Code, e.Message)

	again := call(t, cs, "open_session", map[string]any{"tenant": "acme", "externalKey": "expiring"})
	assert.Equal(t, true, again["created"])
	assert.Equal(t, id, again["replacedSessionID"])
}

// A tool that writes runs within the mutations' deadline, as a GraphQL
// mutation does, its database work with it: past the deadline it is
// TIMEOUT and commits nothing.
func TestMCPCallPastItsClassDeadlineIsTimeout(t *testing.T) {
	s := apitest.New(t)
	id := openKitchen(t, connect(t, s, s.AdminKey))
	slow := apitest.Replica(t, s.DSN, func(c *app.Config) { c.MutationTimeout = 1 }) // 1ns: every write is past it
	cs := connect(t, slow, s.AdminKey)

	e := refused(t, cs, "begin_turn", map[string]any{"sessionID": id, "userMessage": "hi"})
	assert.Equal(t, "TIMEOUT", e.Code, e.Message)
	row, err := s.Engine.Sessions.Session(access.System(context.Background()), uuid.MustParse(id))
	require.NoError(t, err)
	assert.Equal(t, 0, row.CurrentTurn)
}

// A body over the server's limit is refused before it is read whole, with
// the same 413 and code as GraphQL's.
func TestMCPBodyOverTheLimitIsRequestTooLarge(t *testing.T) {
	s := apitest.New(t, func(c *app.Config) { c.MaxBodyBytes = 4096 })
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"begin_turn","arguments":{"userMessage":"` +
		strings.Repeat("a", 5000) + `"}}}`
	req, err := http.NewRequest(http.MethodPost, s.URL+"/mcp", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+s.AdminKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode)
	var out struct {
		Errors []struct {
			Extensions struct{ Code string } `json:"extensions"`
		} `json:"errors"`
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&out))
	require.Len(t, out.Errors, 1)
	assert.Equal(t, "REQUEST_TOO_LARGE", out.Errors[0].Extensions.Code)
}

// A JSON-RPC batch is refused, as a GraphQL batch is, in JSON-RPC: -32600
// with the id null (a batch has none) and BATCHING_DISABLED in its data;
// and GET (a stream for server-sent messages) has nothing to serve on a
// stateless endpoint.
func TestMCPRefusesBatchesAndStreams(t *testing.T) {
	s := apitest.New(t)
	post := func(method, body string) *http.Response {
		req, err := http.NewRequest(method, s.URL+"/mcp", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+s.AdminKey)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { res.Body.Close() })
		return res
	}
	batch := post(http.MethodPost, `[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`)
	assert.Equal(t, http.StatusBadRequest, batch.StatusCode)
	var out struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code int64
			Data struct{ Code string }
		}
	}
	require.NoError(t, json.NewDecoder(batch.Body).Decode(&out))
	assert.Equal(t, "2.0", out.JSONRPC)
	assert.Equal(t, "null", string(out.ID))
	assert.Equal(t, int64(-32600), out.Error.Code)
	assert.Equal(t, "BATCHING_DISABLED", out.Error.Data.Code)

	assert.Equal(t, http.StatusMethodNotAllowed, post(http.MethodGet, "").StatusCode)
}
