package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"sessiongraph/internal/apperr"
	"sessiongraph/internal/jsontext"
)

// maxNameBytes bounds a message's id and method. No client needs more
// (MCP's longest method is under 40 bytes), and at apperr's quote limit the
// SDK's own messages, which quote a method whole, stay within it.
const maxNameBytes = 120

// checkMessages reads a POST's JSON-RPC message before the SDK does, for
// what the SDK would get wrong: it answers a message it cannot take with a
// plain-text 400 that quotes the input whole, echoes an id of any length,
// and decodes text that is not UTF-8 into U+FFFD, so that two different
// keys would open one session. Each refusal here is a JSON-RPC error with
// the house's {code, message, field} in its data, and a refused message
// does no work.
func checkMessages(log *slog.Logger, maxBody int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		if maxBody > 0 {
			r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		}
		body, err := io.ReadAll(r.Body)
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			writeRefusal(w, http.StatusRequestEntityTooLarge, nil, jsonrpc.CodeInvalidRequest,
				apperr.New(apperr.RequestTooLarge, "the request body is over %d bytes; send less at once", maxBody))
			return
		case err != nil:
			writeRefusal(w, http.StatusBadRequest, nil, jsonrpc.CodeParseError,
				apperr.New(apperr.InvalidRequest, "the request body could not be read"))
			return
		}
		msg, refusal := readMessage(body)
		switch {
		case refusal != nil:
			writeRefusal(w, http.StatusBadRequest, refusal.id, refusal.code, refusal.err)
			return
		case msg.invalidText != nil:
			// A valid message with bad text in its params: refused as its
			// method refuses any bad input, a tool call as a tool error.
			res, err := refuse(log, r.Context(), msg.method, msg.invalidText, nil)
			var wire *jsonrpc.Error
			if errors.As(err, &wire) {
				writeResponse(w, http.StatusOK, response{ID: msg.id, Error: wire})
				return
			}
			writeResponse(w, http.StatusOK, response{ID: msg.id, Result: res})
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		plain := &plainRefusals{ResponseWriter: w}
		next.ServeHTTP(plain, r)
		plain.finish(msg.id)
	})
}

// message is what checkMessages reads of a JSON-RPC message.
type message struct {
	id          json.RawMessage // as sent; nil for a notification
	method      string
	invalidText *apperr.Error // text in params that is not UTF-8
}

// refusal is a message refused as a whole: id is null when the id itself
// is at fault.
type refusal struct {
	id   json.RawMessage
	code int64
	err  *apperr.Error
}

// readMessage checks one JSON-RPC message: JSON (or -32700), an object of
// version "2.0" with an id that is a string or a number and a method that
// is a string, each at most maxNameBytes, and text that is UTF-8 (or
// -32600). Text that is not UTF-8 in params is left for the method's answer.
func readMessage(body []byte) (message, *refusal) {
	var fields map[string]json.RawMessage
	err := json.Unmarshal(body, &fields)
	var syntax *json.SyntaxError
	switch {
	case errors.As(err, &syntax):
		return message{}, &refusal{code: jsonrpc.CodeParseError,
			err: apperr.New(apperr.InvalidRequest, "the body is not JSON: %s (at byte %d)", syntax.Error(), syntax.Offset)}
	case bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")):
		return message{}, &refusal{code: jsonrpc.CodeInvalidRequest,
			err: apperr.New(apperr.BatchingDisabled, "batched messages (a JSON array) are not accepted: send one message per request")}
	case err != nil || fields == nil:
		return message{}, invalid("a JSON-RPC message is a JSON object")
	}
	path, bad := jsontext.InvalidText(body)
	inParams := bad && (path == "params" || strings.HasPrefix(path, "params.") || strings.HasPrefix(path, "params["))
	if bad && !inParams {
		return message{}, &refusal{code: jsonrpc.CodeInvalidRequest, err: invalidText(path)}
	}

	var version string
	if json.Unmarshal(fields["jsonrpc"], &version) != nil || version != "2.0" {
		return message{}, invalid(`"jsonrpc" must be "2.0", not %q`, asText(fields["jsonrpc"]))
	}
	m := message{id: fields["id"]}
	switch id := bytes.TrimSpace(m.id); {
	case len(id) == 0 || string(id) == "null":
		m.id = nil
	case id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9'):
		return message{}, invalid(`"id" must be a string or a number, not %q`, asText(id))
	case len(id) > maxNameBytes:
		return message{}, invalid(`"id" is %d bytes; at most %d are allowed: %q`, len(id), maxNameBytes, asText(id))
	}
	raw, ok := fields["method"]
	if !ok {
		if _, answer := fields["result"]; answer {
			return m, nil // an answer; the SDK takes it
		}
		if _, answer := fields["error"]; answer {
			return m, nil
		}
		return message{}, withID(m.id, invalid(`a request names its "method"`))
	}
	if json.Unmarshal(raw, &m.method) != nil {
		return message{}, withID(m.id, invalid(`"method" must be a string, not %q`, asText(raw)))
	}
	if len(m.method) > maxNameBytes {
		return message{}, withID(m.id, invalid(`"method" is %d bytes; at most %d are allowed: %q`, len(m.method), maxNameBytes, m.method))
	}
	if inParams {
		field := path
		if m.method == "tools/call" {
			// A tool's fields are named as in its arguments, as its other
			// refusals name them.
			field = strings.TrimPrefix(path, "params.arguments.")
		}
		m.invalidText = invalidText(field)
	}
	return m, nil
}

// asText is a JSON value for a message to quote: a string as its text, any
// other value as its JSON.
func asText(raw json.RawMessage) string {
	s := string(raw)
	_ = json.Unmarshal(raw, &s)
	return s
}

func invalid(format string, args ...any) *refusal {
	return &refusal{code: jsonrpc.CodeInvalidRequest, err: apperr.New(apperr.InvalidRequest, format, args...)}
}

func withID(id json.RawMessage, r *refusal) *refusal {
	r.id = id
	return r
}

// invalidText refuses text that is not UTF-8, which a decoder would have
// turned into U+FFFD.
func invalidText(field string) *apperr.Error {
	return apperr.Invalid(field, "%s", jsontext.Refusal(field))
}

// response is a JSON-RPC response; unlike the SDK's encoder, it keeps
// "id": null, which JSON-RPC requires of an error about a message whose id
// could not be read.
type response struct {
	ID     json.RawMessage `json:"id"`
	Result any             `json:"result,omitempty"`
	Error  *jsonrpc.Error  `json:"error,omitempty"`
}

func writeResponse(w http.ResponseWriter, status int, res response) {
	if res.ID == nil {
		res.ID = json.RawMessage("null")
	}
	body, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		response
	}{"2.0", res})
	if err != nil {
		panic("mcpserver: encode a response: " + err.Error())
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// writeRefusal answers a refused message with a JSON-RPC error whose
// message starts with the house's code and whose data holds the Error, as
// a refused resource read is answered.
func writeRefusal(w http.ResponseWriter, status int, id json.RawMessage, code int64, err *apperr.Error) {
	e := Error{Code: string(err.Code), Message: err.Message, Field: err.Field}
	data, _ := json.Marshal(e)
	writeResponse(w, status, response{ID: id, Error: &jsonrpc.Error{Code: code, Message: e.Code + ": " + e.Message, Data: data}})
}

// plainRefusals holds back a plain-text refusal of the SDK (a method it
// does not serve, a call without an id, params missing) so that finish
// answers it as a JSON-RPC error instead.
type plainRefusals struct {
	http.ResponseWriter
	status int // of the refusal held back
	text   bytes.Buffer
}

func (p *plainRefusals) WriteHeader(status int) {
	if status >= http.StatusBadRequest && strings.HasPrefix(p.Header().Get("Content-Type"), "text/plain") {
		p.status = status
		return
	}
	p.ResponseWriter.WriteHeader(status)
}

func (p *plainRefusals) Write(b []byte) (int, error) {
	if p.status != 0 {
		return p.text.Write(b)
	}
	return p.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the writer underneath.
func (p *plainRefusals) Unwrap() http.ResponseWriter { return p.ResponseWriter }

// finish answers a refusal held back. The SDK quotes at most a method,
// which readMessage bounded.
func (p *plainRefusals) finish(id json.RawMessage) {
	if p.status == 0 {
		return
	}
	text := strings.TrimSpace(p.text.String())
	code := int64(jsonrpc.CodeInvalidRequest)
	if strings.HasPrefix(text, "JSON RPC not handled") { // the SDK's words for a method it does not serve
		code = jsonrpc.CodeMethodNotFound
	}
	p.Header().Del("X-Content-Type-Options")
	writeRefusal(p.ResponseWriter, p.status, id, code, apperr.New(apperr.InvalidRequest, "%s", text))
}
