package mcpserver_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/mcpserver"
)

// rpcReply is a JSON-RPC response as it came over the wire.
type rpcReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  *struct {
		IsError bool                       `json:"isError"`
		Meta    map[string]mcpserver.Error `json:"_meta"`
		Content []struct{ Text string }    `json:"content"`
		Struct  map[string]any             `json:"structuredContent"`
	} `json:"result"`
	Error *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    mcpserver.Error `json:"data"`
	} `json:"error"`
}

// postMCP sends one JSON-RPC message as an MCP client does over streamable
// HTTP, and answers the HTTP status and the JSON-RPC response, which must
// be JSON whatever the status.
func postMCP(t *testing.T, s *apitest.Server, body string) (int, rpcReply, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL+"/mcp", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+s.AdminKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	assert.Equal(t, "application/json", res.Header.Get("Content-Type"), "%s", raw)
	var reply rpcReply
	require.NoError(t, json.Unmarshal(raw, &reply), "%s", raw)
	assert.Equal(t, "2.0", reply.JSONRPC)
	return res.StatusCode, reply, raw
}

func sessionCount(t *testing.T, s *apitest.Server) int {
	t.Helper()
	var n int
	require.NoError(t, s.DB.QueryRow(`SELECT count(*) FROM sessions`).Scan(&n))
	return n
}

// An external key that is not UTF-8, as raw bytes or as a \u escape of half
// a surrogate pair, is BAD_USER_INPUT over MCP as over GraphQL, and opens no
// session: a decoder would turn each into U+FFFD, and all four would open
// the same one.
func TestMCPExternalKeyThatIsNotUTF8IsBadUserInput(t *testing.T) {
	s := apitest.New(t)
	openSession := func(key string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"open_session",` +
			`"arguments":{"tenant":"acme","externalKey":"` + key + `"}}}`
	}
	before := sessionCount(t, s)
	for name, key := range map[string]string{
		"invalid byte 0xff":   "u8a\xffb",
		"invalid byte 0xfe":   "u8a\xfeb",
		"lone high surrogate": `u8a\ud800b`,
		"lone low surrogate":  `u8a\udc00b`,
	} {
		t.Run(name, func(t *testing.T) {
			status, reply, raw := postMCP(t, s, openSession(key))
			assert.Equal(t, http.StatusOK, status)
			assert.Equal(t, `7`, string(reply.ID))
			require.NotNil(t, reply.Result, "%s", raw)
			assert.True(t, reply.Result.IsError)
			want := mcpserver.Error{Code: "BAD_USER_INPUT", Field: "externalKey",
				Message: "externalKey is not valid UTF-8 (an invalid byte, an overlong form or half a surrogate pair): send UTF-8 text"}
			assert.Equal(t, want, reply.Result.Meta[mcpserver.ErrorMeta])
			require.Len(t, reply.Result.Content, 1)
			assert.Equal(t, want.Code+": "+want.Message, reply.Result.Content[0].Text)
		})
	}
	assert.Equal(t, before, sessionCount(t, s), "no refused call opened a session")

	// The same message with UTF-8 text opens one.
	status, reply, raw := postMCP(t, s, openSession(`u8a\u00ffb`))
	assert.Equal(t, http.StatusOK, status)
	require.NotNil(t, reply.Result, "%s", raw)
	assert.False(t, reply.Result.IsError, "%s", raw)
	assert.Equal(t, "u8aÿb", reply.Result.Struct["session"].(map[string]any)["externalKey"])
	assert.Equal(t, before+1, sessionCount(t, s))
}

// Text that is not UTF-8 anywhere in a message is refused: in a tool's
// name, in a resource's URI (a JSON-RPC error, as a refused resource read
// is), and in the id, which cannot then be echoed (-32600, id null).
func TestMCPTextThatIsNotUTF8AnywhereInAMessageIsRefused(t *testing.T) {
	s := apitest.New(t)
	before := sessionCount(t, s)
	const notUTF8 = "(an invalid byte, an overlong form or half a surrogate pair): send UTF-8 text"

	status, reply, raw := postMCP(t, s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"open_\xffsession\",\"arguments\":{}}}")
	assert.Equal(t, http.StatusOK, status)
	require.NotNil(t, reply.Result, "%s", raw)
	assert.Equal(t, mcpserver.Error{Code: "BAD_USER_INPUT", Field: "params.name", Message: "params.name is not valid UTF-8 " + notUTF8},
		reply.Result.Meta[mcpserver.ErrorMeta])

	status, reply, raw = postMCP(t, s, `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"sessiongraph://sessions/\udc00/working-memory"}}`)
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, `2`, string(reply.ID))
	require.NotNil(t, reply.Error, "%s", raw)
	assert.Equal(t, int64(-32602), reply.Error.Code)
	assert.Equal(t, "BAD_USER_INPUT: params.uri is not valid UTF-8 "+notUTF8, reply.Error.Message)
	assert.Equal(t, mcpserver.Error{Code: "BAD_USER_INPUT", Field: "params.uri", Message: "params.uri is not valid UTF-8 " + notUTF8}, reply.Error.Data)

	status, reply, raw = postMCP(t, s, "{\"jsonrpc\":\"2.0\",\"id\":\"a\xffb\",\"method\":\"tools/list\"}")
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Equal(t, `null`, string(reply.ID))
	require.NotNil(t, reply.Error, "%s", raw)
	assert.Equal(t, int64(-32600), reply.Error.Code)
	assert.Equal(t, mcpserver.Error{Code: "BAD_USER_INPUT", Field: "id", Message: "id is not valid UTF-8 " + notUTF8}, reply.Error.Data)

	assert.Equal(t, before, sessionCount(t, s))
}

// A message the server cannot take is answered with a JSON-RPC error, not
// plain text: -32700 for a body that is not JSON, -32600 for a message that
// is not a valid request, -32601 for a method the server does not serve.
// The message starts with the code its data holds, and quotes at most 120
// bytes of what was sent, as every error of the server does.
func TestMCPMalformedMessagesAreJSONRPCErrors(t *testing.T) {
	s := apitest.New(t)
	megabyteID := strings.Repeat("i", 1<<20)
	longMethod := "tools/" + strings.Repeat("m", 300)
	for name, c := range map[string]struct {
		body    string
		status  int
		id      string
		code    int64
		message string
	}{
		"not JSON": {`{"jsonrpc":"2.0",`, 400, `null`, -32700,
			"INVALID_REQUEST: the body is not JSON: unexpected end of JSON input (at byte 17)"},
		"not an object": {`"tools/list"`, 400, `null`, -32600,
			"INVALID_REQUEST: a JSON-RPC message is a JSON object"},
		"another version": {`{"jsonrpc":"1.0","id":1,"method":"tools/list"}`, 400, `null`, -32600,
			`INVALID_REQUEST: "jsonrpc" must be "2.0", not "1.0"`},
		"an id that is neither a string nor a number": {`{"jsonrpc":"2.0","id":true,"method":"tools/list"}`, 400, `null`, -32600,
			`INVALID_REQUEST: "id" must be a string or a number, not "true"`},
		"an id of a megabyte": {`{"jsonrpc":"2.0","id":"` + megabyteID + `","method":"tools/list"}`, 400, `null`, -32600,
			`INVALID_REQUEST: "id" is 1048578 bytes; at most 120 are allowed: "` + megabyteID[:120] + `…"`},
		"a method of 306 bytes": {`{"jsonrpc":"2.0","id":1,"method":"` + longMethod + `"}`, 400, `1`, -32600,
			`INVALID_REQUEST: "method" is 306 bytes; at most 120 are allowed: "` + longMethod[:120] + `…"`},
		"a method that is not a string": {`{"jsonrpc":"2.0","id":1,"method":7}`, 400, `1`, -32600,
			`INVALID_REQUEST: "method" must be a string, not "7"`},
		"no method": {`{"jsonrpc":"2.0","id":"x"}`, 400, `"x"`, -32600,
			`INVALID_REQUEST: a request names its "method"`},
		"a method the server does not serve": {`{"jsonrpc":"2.0","id":1,"method":"tools/run","params":{}}`, 400, `1`, -32601,
			`INVALID_REQUEST: JSON RPC not handled: "tools/run" unsupported`},
		"a call without an id": {`{"jsonrpc":"2.0","method":"tools/list"}`, 400, `null`, -32600,
			`INVALID_REQUEST: invalid request: missing id for "tools/list"`},
		"a call without params": {`{"jsonrpc":"2.0","id":3,"method":"tools/call"}`, 400, `3`, -32600,
			`INVALID_REQUEST: invalid request: missing required "params"`},
	} {
		t.Run(name, func(t *testing.T) {
			status, reply, raw := postMCP(t, s, c.body)
			assert.Equal(t, c.status, status)
			assert.Equal(t, c.id, string(reply.ID))
			require.NotNil(t, reply.Error, "%s", raw)
			assert.Equal(t, c.code, reply.Error.Code)
			assert.Equal(t, c.message, reply.Error.Message)
			assert.Equal(t, mcpserver.Error{Code: "INVALID_REQUEST", Message: strings.TrimPrefix(c.message, "INVALID_REQUEST: ")}, reply.Error.Data)
			assert.Less(t, len(raw), 1024, "the answer quotes at most 120 bytes of the message")
		})
	}
}
