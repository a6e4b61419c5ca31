package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/testpy"
)

// stdioConfig is docs/mcp.md's configuration for a host that speaks only
// stdio: the one JSON block that names a command.
type stdioConfig struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

func docsStdioConfig(t *testing.T) stdioConfig {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("docs", "mcp.md"))
	require.NoError(t, err)
	var found []stdioConfig
	for _, block := range strings.Split(string(b), "```json\n")[1:] {
		block = block[:strings.Index(block, "```")]
		if !strings.Contains(block, `"command"`) {
			continue
		}
		var config struct {
			MCPServers map[string]stdioConfig `json:"mcpServers"`
		}
		require.NoError(t, json.Unmarshal([]byte(block), &config), block)
		found = append(found, config.MCPServers["sessiongraph"])
	}
	require.Len(t, found, 1, "docs/mcp.md has one stdio configuration")
	return found[0]
}

// stdioHost is an MCP host that speaks only stdio: the official Python
// SDK's client starts the server as the configuration in argv[1] says and
// runs a turn, printing what it got as JSON. A refused call prints the
// error the host shows.
const stdioHost = `
import asyncio, json, sys
from mcp import Client, MCPError, StdioServerParameters

async def main():
    config = json.loads(sys.argv[1])
    out = {}
    try:
        async with Client(StdioServerParameters(**config)) as client:
            out["protocol"] = client.protocol_version
            out["server"] = client.server_info.name
            out["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
            opened = (await client.call_tool("open_session", {"tenant": "acme", "externalKey": "desk-1"})).structured_content
            session = opened["session"]
            out["opened"] = {"created": opened["created"], "status": session["status"], "currentTurn": session["currentTurn"]}
            began = await client.call_tool("begin_turn", {"sessionID": session["id"], "userMessage": "What can I cook tonight?"})
            out["began"] = began.structured_content["turn"]
            ended = await client.call_tool("end_turn", {"sessionID": session["id"], "assistantMessage": "How about Dal Tadka?"})
            out["ended"] = ended.structured_content["turn"]
    except* MCPError as refused:  # raised inside the client's task group
        while isinstance(refused, BaseExceptionGroup):
            refused = refused.exceptions[0]
        out["error"] = str(refused)
    print(json.dumps(out))

asyncio.run(main())
`

// A desktop host that speaks only stdio connects with docs/mcp.md's
// configuration (the command this test built, its args, its environment):
// the official Python SDK's stdio client initializes, lists the tools and
// runs open_session → begin_turn → end_turn against a real server. With a
// key the server refuses, the host's error is the server's, and the
// bridge says it on stderr.
func TestMCPStdioBridgeRunsATurnForAStdioHost(t *testing.T) {
	config := docsStdioConfig(t)
	require.Equal(t, "sessiongraph", config.Command)
	require.Equal(t, config.Command, filepath.Base(binaryPath), "the test runs the command the docs name")
	require.Equal(t, []string{"mcp", "--stdio"}, config.Args)
	require.Equal(t, map[string]string{"SG_URL": "http://127.0.0.1:8080", "SG_API_KEY": "sg_..."}, config.Env)

	python := testpy.Venv(t, filepath.Join("clients", "python", "constraints.txt"), "mcp")
	script := filepath.Join(t.TempDir(), "host.py")
	require.NoError(t, os.WriteFile(script, []byte(stdioHost), 0o644))
	s := apitest.New(t)
	host := func(key string) (stdout, stderr string) {
		params, err := json.Marshal(map[string]any{"command": binaryPath, "args": config.Args,
			"env": map[string]string{"SG_URL": s.URL, "SG_API_KEY": key}})
		require.NoError(t, err)
		cmd := exec.Command(python, script, string(params))
		cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		require.NoError(t, cmd.Run(), "%s", errOut.String())
		return out.String(), errOut.String()
	}

	stdout, stderr := host(s.NewKey(t, "CLIENT", "acme"))
	assert.JSONEq(t, `{"protocol":"2026-07-28","server":"sessiongraph",
		"tools":["begin_turn","build_context","end_turn","fail_turn","open_session","read_refs","record_created",
			"record_deleted","record_generated","record_items","record_model_call","record_read","record_updated","release_ref","resolve_refs","retain_ref",
			"translate_filters","translate_payload","working_memory"],
		"opened":{"created":true,"status":"ACTIVE","currentTurn":0},
		"began":{"number":1,"status":"OPEN","userMessage":"What can I cook tonight?"},
		"ended":{"number":1,"status":"COMPLETED","userMessage":"What can I cook tonight?","assistantMessage":"How about Dal Tadka?"}}`, stdout)
	assert.Empty(t, stderr)

	const refused = "this API key is not valid: check that it was copied whole, or ask an admin for a new one"
	stdout, stderr = host("sg_not-a-key")
	assert.JSONEq(t, `{"error":"UNAUTHENTICATED: `+refused+`"}`, stdout)
	assert.Equal(t, "sessiongraph mcp: "+s.URL+"/mcp refused the key in SG_API_KEY (401 UNAUTHENTICATED): "+refused+"\n"+
		"sessiongraph mcp: the server refused the key in SG_API_KEY\n", stderr)
}

// bridge runs `sessiongraph mcp --stdio` on the lines of stdin to the end.
func bridge(t *testing.T, env []string, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binaryPath, append([]string{"mcp", "--stdio"}, args...)...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	done := make(chan error, 1)
	require.NoError(t, cmd.Start())
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("sessiongraph mcp --stdio still runs a minute after its input ended; stderr:\n%s", errOut.String())
	}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("run sessiongraph mcp --stdio: %v", err)
	}
	return out.String(), errOut.String(), code
}

// The bridge decides nothing: what it writes for each line is what /mcp
// answers the same bytes (a handshake, a message that is not JSON, a
// batch, text that is not UTF-8), a notification gets no line, and it
// exits 0 when its input ends. A refused key answers each request and
// exits 1; an unreachable server answers UNAVAILABLE; no --stdio, no key,
// a key on the command line or no URL is a usage error, before any message
// is read.
func TestMCPStdioBridgeForwardsAsTheDoorAnswers(t *testing.T) {
	s := apitest.New(t)
	key := s.NewKey(t, "CLIENT", "acme")
	messages := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"desk","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"open_session","arguments":{"tenant":"acme","externalKey":"k\ud800"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"open_session","arguments":{"tenant":"globex","externalKey":"k"}}}`,
		`[{"jsonrpc":"2.0","id":4,"method":"tools/list"}]`,
		`{"jsonrpc":"2.0","id":5,"method":`,
	}
	var want []string
	for _, m := range messages {
		req, err := http.NewRequest(http.MethodPost, s.URL+"/mcp", strings.NewReader(m))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		require.NoError(t, err)
		switch {
		case len(body) == 0:
		default:
			var line bytes.Buffer
			require.NoError(t, json.Compact(&line, body))
			want = append(want, line.String()+"\n")
		}
	}
	require.Len(t, want, 5, "every message but the notification has an answer")
	require.Contains(t, want[1], `BAD_USER_INPUT`)
	require.Contains(t, want[2], `FORBIDDEN`)
	require.Contains(t, want[3], `BATCHING_DISABLED`)
	require.Contains(t, want[4], `-32700`)

	stdout, stderr, code := bridge(t, binaryEnv("SG_URL="+s.URL, "SG_API_KEY="+key), strings.Join(messages, "\n")+"\n")
	assert.Equal(t, strings.Join(want, ""), stdout)
	assert.Empty(t, stderr)
	assert.Equal(t, 0, code)

	const refused = "this API key is not valid: check that it was copied whole, or ask an admin for a new one"
	stdout, stderr, code = bridge(t, binaryEnv("SG_API_KEY=sg_not-a-key"), messages[0]+"\n"+messages[1]+"\n"+
		`{"jsonrpc":"2.0","id":"b","method":"tools/list"}`+"\n", "-url", s.URL+"/")
	assert.Equal(t,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"UNAUTHENTICATED: `+refused+`","data":{"code":"UNAUTHENTICATED","message":"`+refused+`"}}}`+"\n"+
			`{"jsonrpc":"2.0","id":"b","error":{"code":-32600,"message":"UNAUTHENTICATED: `+refused+`","data":{"code":"UNAUTHENTICATED","message":"`+refused+`"}}}`+"\n",
		stdout)
	assert.Equal(t, "sessiongraph mcp: "+s.URL+"/mcp refused the key in SG_API_KEY (401 UNAUTHENTICATED): "+refused+"\n"+
		"sessiongraph mcp: the server refused the key in SG_API_KEY\n", stderr)
	assert.Equal(t, 1, code)

	closed, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	gone := "http://" + closed.Addr().String()
	require.NoError(t, closed.Close())
	stdout, stderr, code = bridge(t, binaryEnv("SG_URL="+gone, "SG_API_KEY="+key), messages[0]+"\n")
	why := `cannot reach ` + gone + `/mcp: Post \"` + gone + `/mcp\": dial tcp ` + strings.TrimPrefix(gone, "http://") + `: connect: connection refused`
	assert.Equal(t, `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"UNAVAILABLE: `+why+`","data":{"code":"UNAVAILABLE","message":"`+why+`"}}}`+"\n", stdout)
	assert.Equal(t, "sessiongraph mcp: UNAVAILABLE: "+strings.ReplaceAll(why, `\"`, `"`)+"\n", stderr)
	assert.Equal(t, 0, code)

	_, stderr, code = runBinary(t, binaryEnv("SG_URL="+s.URL, "SG_API_KEY="+key), "mcp")
	assert.Equal(t, mcpUsage+"\n", stderr)
	assert.Equal(t, 2, code)
	_, stderr, code = runBinary(t, binaryEnv("SG_URL="+s.URL), "mcp", "--stdio", "-key", key)
	assert.Equal(t, "flag provided but not defined: -key\n"+mcpUsage+"\n", stderr, "the key is never a flag")
	assert.Equal(t, 2, code)
	for _, c := range []struct {
		env    []string
		stderr string
	}{
		{binaryEnv("SG_URL=" + s.URL), "sessiongraph mcp: no API key: set SG_API_KEY to a key (sessiongraph keys create)\n"},
		{binaryEnv("SG_API_KEY=" + key), "sessiongraph mcp: no server: set SG_URL (or -url) to the server, such as http://127.0.0.1:8080\n"},
	} {
		stdout, stderr, code := bridge(t, c.env, messages[0]+"\n")
		assert.Equal(t, "", stdout)
		assert.Equal(t, c.stderr, stderr)
		assert.Equal(t, 2, code)
	}
}
