package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/mcpserver"
)

// bearer sends an API key with every request, as an MCP host configured
// with the header does.
type bearer struct{ key string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens an MCP session with the Go SDK's client, sending key.
func connect(t *testing.T, s *apitest.Server, key string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "sessiongraph-test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: s.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{key}}, DisableStandaloneSSE: true,
	}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	return cs
}

// call runs a tool that must succeed and answers its structured content.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	require.False(t, res.IsError, "%s: %s", name, func() string { b, _ := json.Marshal(res.Content); return string(b) }())
	var out map[string]any
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

// refused runs a tool that must fail and answers its error, checking that
// the text starts with the code as _meta has it.
func refused(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) mcpserver.Error {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	require.True(t, res.IsError, "%s succeeded: %v", name, res.StructuredContent)
	var e mcpserver.Error
	b, err := json.Marshal(res.Meta[mcpserver.ErrorMeta])
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &e))
	require.Len(t, res.Content, 1)
	assert.Equal(t, e.Code+": "+e.Message, res.Content[0].(*mcp.TextContent).Text)
	return e
}

// openKitchen opens a session of tenant acme with an admin key and answers
// its id.
func openKitchen(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	out := call(t, cs, "open_session", map[string]any{"tenant": "acme", "externalKey": "chat-" + uuid.NewString()})
	return out["session"].(map[string]any)["id"].(string)
}

// A request without a key, or with a key that is not one, is refused
// before any MCP message is read, as GraphQL refuses it: 401 with the
// UNAUTHENTICATED code.
func TestMCPWithoutAValidKeyIsUnauthenticated(t *testing.T) {
	s := apitest.New(t)
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`
	for name, header := range map[string]string{"no key": "", "not a key": "Bearer sg_not_a_key", "not bearer": "Basic abc"} {
		t.Run(name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, s.URL+"/mcp", strings.NewReader(initialize))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if header != "" {
				req.Header.Set("Authorization", header)
			}
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer res.Body.Close()
			assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
			var body struct {
				Errors []struct {
					Extensions struct{ Code string } `json:"extensions"`
				} `json:"errors"`
			}
			require.NoError(t, json.NewDecoder(res.Body).Decode(&body))
			require.Len(t, body.Errors, 1)
			assert.Equal(t, "UNAUTHENTICATED", body.Errors[0].Extensions.Code)
		})
	}
}

// A READER key reads (context, working memory, refs) but every tool that
// writes is FORBIDDEN, and the refused call changes nothing.
func TestMCPReaderKeyReadsButDoesNotWrite(t *testing.T) {
	s := apitest.New(t)
	id := openKitchen(t, connect(t, s, s.AdminKey))
	reader := connect(t, s, s.NewKey(t, "READER", "acme"))

	ctx := call(t, reader, "build_context", map[string]any{"sessionID": id, "node": "THINK"})
	assert.Equal(t, float64(8000), ctx["budget"])
	memory := call(t, reader, "working_memory", map[string]any{"sessionID": id})
	assert.Equal(t, float64(0), memory["turnCount"])
	res, err := reader.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "sessiongraph://sessions/" + id + "/working-memory"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"turnCount":0,"recentEntities":[],"summary":"","shouldSummarize":false}`, res.Contents[0].Text)

	// The tools say which write, so a host can tell before it calls.
	tools, err := reader.ListTools(context.Background(), nil)
	require.NoError(t, err)
	readOnly := map[string]bool{}
	for _, tool := range tools.Tools {
		readOnly[tool.Name] = tool.Annotations.ReadOnlyHint
	}
	assert.Equal(t, map[string]bool{"begin_turn": false, "build_context": true, "end_turn": false, "fail_turn": false,
		"open_session": false, "read_refs": true, "record_created": false, "record_deleted": false, "record_generated": false,
		"record_items": false, "record_model_call": false, "record_read": false, "record_updated": false, "release_ref": false, "resolve_refs": true, "retain_ref": false,
		"translate_filters": true, "translate_payload": true, "working_memory": true}, readOnly)

	for name, args := range map[string]map[string]any{
		"begin_turn":       {"sessionID": id, "userMessage": "hello"},
		"open_session":     {"tenant": "acme", "externalKey": "reader-" + uuid.NewString()},
		"record_generated": {"sessionID": id, "entityType": "meal_plan", "content": map[string]any{"date": "2026-01-12"}},
		"retain_ref":       {"sessionID": id, "ref": "recipe_1", "reason": "r"},
	} {
		e := refused(t, reader, name, args)
		assert.Equal(t, mcpserver.Error{Code: "FORBIDDEN", Message: "this key is a READER key: it may read, not run " + name + ", which writes"}, e, name)
	}
	row, err := s.Engine.Sessions.Session(access.System(context.Background()), uuid.MustParse(id))
	require.NoError(t, err)
	assert.Equal(t, 0, row.CurrentTurn, "the refused begin_turn opened no turn")
}

// A CLIENT key acts in its own tenant only: another tenant's session is
// NOT_FOUND, to its tools and its resources alike, and opening a session in
// another tenant is FORBIDDEN.
func TestMCPClientKeyIsConfinedToItsTenant(t *testing.T) {
	s := apitest.New(t)
	id := openKitchen(t, connect(t, s, s.AdminKey))
	other := connect(t, s, s.NewKey(t, "CLIENT", "globex"))

	notFound := mcpserver.Error{Code: "NOT_FOUND", Message: "session " + id + " not found"}
	assert.Equal(t, notFound, refused(t, other, "begin_turn", map[string]any{"sessionID": id, "userMessage": "hi"}))
	assert.Equal(t, notFound, refused(t, other, "build_context", map[string]any{"sessionID": id, "node": "REPLY"}))
	assert.Equal(t, notFound, refused(t, other, "resolve_refs", map[string]any{"sessionID": id, "refs": []string{"recipe_1"}}))
	_, err := other.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "sessiongraph://sessions/" + id + "/working-memory"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "NOT_FOUND: session "+id+" not found")

	assert.Equal(t, mcpserver.Error{Code: "FORBIDDEN", Message: `this key belongs to tenant "globex" and cannot act in tenant "acme"`},
		refused(t, other, "open_session", map[string]any{"tenant": "acme", "externalKey": "x"}))

	// Its own tenant works.
	own := call(t, other, "open_session", map[string]any{"tenant": "globex", "externalKey": "mine"})
	assert.Equal(t, true, own["created"])
}
