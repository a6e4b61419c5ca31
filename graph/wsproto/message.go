package wsproto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"

	"sessiongraph/internal/jsontext"
)

// Message types of graphql-transport-ws.
const (
	typeConnectionInit = "connection_init"
	typeConnectionAck  = "connection_ack"
	typePing           = "ping"
	typePong           = "pong"
	typeSubscribe      = "subscribe"
	typeNext           = "next"
	typeError          = "error"
	typeComplete       = "complete"
)

// message is one protocol message in either direction; Payload is nil when
// absent or null.
type message struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// nextMessage encodes {"id":id,"type":"next","payload":payload} by
// concatenation: it is the message of every event to every subscriber, and
// encoding/json would re-validate and copy the payload each time.
func nextMessage(id string, payload []byte) []byte {
	quoted, err := json.Marshal(id)
	if err != nil {
		panic(fmt.Sprintf("wsproto: encode id: %v", err))
	}
	b := make([]byte, 0, len(`{"id":,"type":"next","payload":}`)+len(quoted)+len(payload))
	b = append(b, `{"id":`...)
	b = append(b, quoted...)
	b = append(b, `,"type":"next","payload":`...)
	b = append(b, payload...)
	return append(b, '}')
}

// responsePayload encodes a response. The common one, data alone, is
// {"data":...} with gqlgen's already encoded data; others go through encoding/json.
func responsePayload(resp *graphql.Response) []byte {
	if len(resp.Errors) == 0 && resp.Label == "" && resp.Path == nil && resp.HasNext == nil &&
		len(resp.Extensions) == 0 && len(resp.Data) > 0 {
		b := make([]byte, 0, len(`{"data":}`)+len(resp.Data))
		b = append(b, `{"data":`...)
		b = append(b, resp.Data...)
		return append(b, '}')
	}
	payload, err := json.Marshal(resp)
	if err != nil {
		panic(fmt.Sprintf("wsproto: encode response: %v", err))
	}
	return payload
}

// parseMessage decodes a client message and checks the fields every type
// shares; the reason of its error becomes the 4400 close reason.
func parseMessage(data []byte) (message, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil || fields == nil {
		return message{}, errors.New("Invalid message: not a JSON object")
	}
	// Decoding turns text that is not UTF-8 into U+FFFD: refuse it first.
	if path, bad := jsontext.InvalidText(data); bad {
		return message{}, fmt.Errorf("Invalid message: %s is not valid UTF-8", path)
	}
	var m message
	if err := json.Unmarshal(fields["type"], &m.Type); err != nil || m.Type == "" {
		return message{}, errors.New(`Invalid message: "type" must be a non-empty string`)
	}
	if raw, ok := fields["id"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &m.ID); err != nil {
			return message{}, errors.New(`Invalid message: "id" must be a string`)
		}
	}
	if raw := fields["payload"]; !isNull(raw) {
		m.Payload = raw
	}

	switch m.Type {
	case typeConnectionInit, typePing, typePong:
		if m.Payload != nil && !isObject(m.Payload) {
			return message{}, fmt.Errorf(`Invalid message: %q payload must be an object`, m.Type)
		}
	case typeSubscribe, typeComplete:
		if m.ID == "" {
			return message{}, fmt.Errorf(`Invalid message: %q needs a non-empty "id"`, m.Type)
		}
	default:
		return message{}, fmt.Errorf("Invalid message: unexpected type %q", m.Type)
	}
	return m, nil
}

// subscribeParams decodes a subscribe payload into gqlgen's request parameters.
func subscribeParams(payload json.RawMessage) (*graphql.RawParams, error) {
	var p struct {
		Query         *string        `json:"query"`
		OperationName *string        `json:"operationName"`
		Variables     map[string]any `json:"variables"`
		Extensions    map[string]any `json:"extensions"`
	}
	// UseNumber keeps variables as json.Number, the way gqlgen's own transports decode them.
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	if !isObject(payload) || dec.Decode(&p) != nil || p.Query == nil {
		return nil, errors.New(`Invalid message: "subscribe" payload must be {query, operationName?, variables?, extensions?}`)
	}
	params := &graphql.RawParams{Query: *p.Query, Variables: p.Variables, Extensions: p.Extensions}
	if p.OperationName != nil {
		params.OperationName = *p.OperationName
	}
	return params, nil
}

// initPayload decodes a connection_init payload; nil when there is none.
func initPayload(payload json.RawMessage) map[string]any {
	if payload == nil {
		return nil
	}
	var m map[string]any
	_ = json.Unmarshal(payload, &m) // parseMessage has checked it is an object.
	return m
}

func isNull(raw json.RawMessage) bool {
	return raw == nil || string(bytes.TrimSpace(raw)) == "null"
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// maxCloseReason is the longest close reason a close frame carries (125 bytes less the code).
const maxCloseReason = 123

// closeReason cuts reason to what a close frame carries, on a rune boundary.
func closeReason(reason string) string {
	if len(reason) <= maxCloseReason {
		return reason
	}
	cut := maxCloseReason
	for cut > 0 && !utf8.RuneStart(reason[cut]) {
		cut--
	}
	return reason[:cut]
}
