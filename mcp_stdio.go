package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"sessiongraph/internal/apperr"
	"sessiongraph/internal/config"
	"sessiongraph/internal/mcpserver"
)

const mcpUsage = `usage: SG_API_KEY=sg_... sessiongraph mcp --stdio [-url http://127.0.0.1:8080]
serves MCP on stdin and stdout for a host that speaks only stdio: each
line read is POSTed to the server's /mcp as it is, each answer written as
one line. The URL is -url or SG_URL (/mcp is added when missing); the key
is SG_API_KEY, never a flag, so that it stays out of the process list.`

// mcpCommand bridges a host that speaks MCP over stdio to the server's
// /mcp: a client of /mcp over HTTP like any other, so every rule of the
// server's door (key, tenant, role, rate, limits, input checks) applies to
// what it forwards, and it forwards each message byte for byte so that the
// server's checks see what the host sent.
func mcpCommand(ctx context.Context, args []string, env config.Lookup, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sessiongraph mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(stderr, mcpUsage) }
	stdio := fs.Bool("stdio", false, "serve MCP on stdin and stdout")
	url := fs.String("url", "", "the server, such as http://127.0.0.1:8080 (default: SG_URL)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *url == "" {
		*url, _ = env("SG_URL")
	}
	key, _ := env("SG_API_KEY")
	switch {
	case !*stdio || fs.NArg() > 0:
		fmt.Fprintln(stderr, mcpUsage)
		return 2
	case *url == "":
		fmt.Fprintln(stderr, "sessiongraph mcp: no server: set SG_URL (or -url) to the server, such as http://127.0.0.1:8080")
		return 2
	case key == "":
		fmt.Fprintln(stderr, "sessiongraph mcp: no API key: set SG_API_KEY to a key (sessiongraph keys create)")
		return 2
	}
	endpoint := strings.TrimSuffix(*url, "/")
	if !strings.HasSuffix(endpoint, "/mcp") {
		endpoint += "/mcp"
	}
	b := &stdioBridge{endpoint: endpoint, key: key, out: stdout, log: stderr}
	if err := b.run(ctx, os.Stdin); err != nil {
		fmt.Fprintln(stderr, "sessiongraph mcp:", err)
		return 1
	}
	return 0
}

// stdioBridge forwards newline-delimited JSON-RPC messages to an MCP
// endpoint over streamable HTTP, one at a time and in order.
type stdioBridge struct {
	endpoint, key string
	out, log      io.Writer
	// version is the protocol version initialize agreed on, sent with each
	// later message that does not name its own, as HTTP clients do.
	version string
	// refused is why the server refused the key (401): every later request
	// gets the same answer without asking again, as no key changes while
	// the bridge runs.
	refused string
}

// envelope is what the bridge reads of a message: what the streamable
// HTTP transport repeats in headers. The message itself goes as it came.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name string `json:"name"` // tools/call, prompts/get
		URI  string `json:"uri"`  // resources/read
		Meta struct {
			ProtocolVersion string `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
	} `json:"params"`
}

// errKeyRefused ends a bridge whose key the server refused, when its input
// ends: exit code 1.
var errKeyRefused = errors.New("the server refused the key in SG_API_KEY")

// run forwards each line of in until in ends or ctx does; it fails when
// the server refused the key.
func (b *stdioBridge) run(ctx context.Context, in io.Reader) error {
	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() { // a read of stdin cannot be cancelled: the loop below stops waiting for it instead
		r := bufio.NewReader(in)
		for {
			line, err := r.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				select {
				case lines <- bytes.TrimRight(line, "\r\n"):
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				readErr <- err
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-readErr:
			switch {
			case b.refused != "":
				return errKeyRefused
			case errors.Is(err, io.EOF):
				return nil
			}
			return fmt.Errorf("reading stdin: %w", err)
		case line := <-lines:
			if err := b.forward(ctx, line); err != nil {
				return err
			}
		}
	}
}

// forward POSTs one message and writes its answer, if it has one, as one
// line. A request the server refused before reading it as MCP (a key it
// does not know, a batch) gets the same refusal as a JSON-RPC error, and a
// request it could not answer at all (unreachable) a JSON-RPC error of the
// bridge's own, so that the host is never left waiting.
func (b *stdioBridge) forward(ctx context.Context, message []byte) error {
	var env envelope
	if json.Unmarshal(message, &env) != nil {
		// Not one JSON-RPC object: it goes as it is, the server answers
		// why, and that answer's id is null, as no id could be read.
		env = envelope{ID: json.RawMessage("null")}
	}
	if b.refused != "" {
		return b.answerError(env.ID, codeRefused, apperr.Unauthenticated, b.refused)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.endpoint, bytes.NewReader(message))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+b.key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	version := env.Params.Meta.ProtocolVersion
	if version == "" && env.Method != "initialize" {
		version = b.version
	}
	for name, value := range map[string]string{"Mcp-Protocol-Version": version, "Mcp-Method": env.Method, "Mcp-Name": env.Params.Name + env.Params.URI} {
		if value != "" && headerValue(value) {
			req.Header.Set(name, value)
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return b.unanswered(env.ID, fmt.Sprintf("cannot reach %s: %v", b.endpoint, err))
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return b.unanswered(env.ID, fmt.Sprintf("reading the answer of %s: %v", b.endpoint, err))
	}
	var answer struct {
		JSONRPC string `json:"jsonrpc"`
		Result  struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
		Errors []struct { // the door's refusal, in the shape it has for every transport
			Message    string `json:"message"`
			Extensions struct {
				Code apperr.Code `json:"code"`
			} `json:"extensions"`
		} `json:"errors"`
	}
	decoded := json.Unmarshal(body, &answer) == nil
	switch {
	case len(body) == 0 && res.StatusCode < 300:
		return nil // a notification or a response, accepted
	case decoded && answer.JSONRPC == "" && len(answer.Errors) > 0:
		refusal := answer.Errors[0]
		if res.StatusCode == http.StatusUnauthorized {
			b.refused = refusal.Message
			fmt.Fprintf(b.log, "sessiongraph mcp: %s refused the key in SG_API_KEY (401 %s): %s\n", b.endpoint, refusal.Extensions.Code, refusal.Message)
		}
		return b.answerError(env.ID, codeRefused, refusal.Extensions.Code, refusal.Message)
	case !decoded || answer.JSONRPC == "":
		return b.unanswered(env.ID, fmt.Sprintf("%s answered %s, not in JSON-RPC: %.120q", b.endpoint, res.Status, body))
	}
	if env.Method == "initialize" && answer.Result.ProtocolVersion != "" {
		b.version = answer.Result.ProtocolVersion
	}
	var line bytes.Buffer
	if err := json.Compact(&line, body); err != nil {
		return err
	}
	line.WriteByte('\n')
	_, err = b.out.Write(line.Bytes())
	return err
}

// The JSON-RPC codes of the errors the bridge writes: a message the server
// refused (its own code and message in the error), and one the server did
// not answer.
const (
	codeRefused    = -32600
	codeUnanswered = -32603
)

// unanswered says on stderr why a message got no answer from the server
// and answers it in the server's stead: UNAVAILABLE, to retry.
func (b *stdioBridge) unanswered(id json.RawMessage, why string) error {
	fmt.Fprintf(b.log, "sessiongraph mcp: %s: %s\n", apperr.Unavailable, why)
	return b.answerError(id, codeUnanswered, apperr.Unavailable, why)
}

// answerError writes a JSON-RPC error shaped as the server's own: the code
// first in the message, and the code and message in data. A notification
// (no id) gets no answer.
func (b *stdioBridge) answerError(id json.RawMessage, rpcCode int, code apperr.Code, message string) error {
	if len(id) == 0 {
		return nil
	}
	type wireError struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    mcpserver.Error `json:"data"`
	}
	line, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   wireError       `json:"error"`
	}{"2.0", id, wireError{rpcCode, string(code) + ": " + message, mcpserver.Error{Code: string(code), Message: message}}})
	if err != nil {
		return err
	}
	_, err = b.out.Write(append(line, '\n'))
	return err
}

// headerValue reports whether s can go in an HTTP header as it is.
func headerValue(s string) bool {
	for _, c := range []byte(s) {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}
