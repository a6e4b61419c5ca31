package apitest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/stretchr/testify/require"
)

// WS is a graphql-transport-ws client connection.
type WS struct {
	t      testing.TB
	conn   *websocket.Conn
	ctx    context.Context
	cancel context.CancelFunc
	next   int
}

// Message is one server message of the protocol.
type Message struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// DialWS opens a connection and completes connection_init with payload.
func (s *Server) DialWS(t testing.TB, payload map[string]any) *WS {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.URL, "http")+"/graphql", &websocket.DialOptions{
		Subprotocols: []string{"graphql-transport-ws"},
		HTTPHeader:   http.Header{},
	})
	require.NoError(t, err)
	conn.SetReadLimit(16 << 20)
	w := &WS{t: t, conn: conn, ctx: ctx, cancel: cancel}
	t.Cleanup(func() { conn.CloseNow() })
	w.Send(Message{Type: "connection_init", Payload: mustJSON(s.initPayload(payload))})
	ack := w.Read(10 * time.Second)
	require.Equal(t, "connection_ack", ack.Type)
	return w
}

// initPayload adds the server's Key to a connection_init payload, unless
// the payload says Authorization itself.
func (s *Server) initPayload(payload map[string]any) map[string]any {
	if _, ok := payload["Authorization"]; ok || s.Key == "" {
		return payload
	}
	out := map[string]any{"Authorization": "Bearer " + s.Key}
	for k, v := range payload {
		out[k] = v
	}
	return out
}

// Send writes a message.
func (w *WS) Send(m Message) {
	w.t.Helper()
	require.NoError(w.t, wsjson.Write(w.ctx, w.conn, m))
}

// Subscribe starts an operation and returns its id.
func (w *WS) Subscribe(query string, vars map[string]any) string {
	w.t.Helper()
	w.next++
	id := fmt.Sprint(w.next)
	w.Send(Message{ID: id, Type: "subscribe", Payload: mustJSON(map[string]any{"query": query, "variables": vars})})
	return id
}

// Read returns the next message that is not a keep-alive.
func (w *WS) Read(timeout time.Duration) Message {
	w.t.Helper()
	for {
		ctx, cancel := context.WithTimeout(w.ctx, timeout)
		var m Message
		err := wsjson.Read(ctx, w.conn, &m)
		cancel()
		require.NoError(w.t, err)
		switch m.Type {
		case "ping":
			w.Send(Message{Type: "pong"})
			continue
		case "pong", "ka":
			continue
		}
		return m
	}
}

// Close closes the connection normally.
func (w *WS) Close() {
	w.conn.Close(websocket.StatusNormalClosure, "bye")
	w.cancel()
}

func mustJSON(v any) json.RawMessage {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// TryDialWS subscribes to sessionEvents(id, after) on a new connection,
// returning an error instead of failing the test, for clients that retry.
func (s *Server) TryDialWS(vars map[string]any) (*WS, error) {
	return s.TrySubscribe(`subscription($id: ID!, $after: Int) { sessionEvents(sessionID: $id, after: $after) { sequence sessionID kind payload } }`, vars)
}

// TrySubscribe starts a subscription (id "1") on a new connection,
// returning an error instead of failing the test, for clients that retry.
// It needs only the server's URL and Key, so it reaches servers in other
// processes too.
func (s *Server) TrySubscribe(query string, vars map[string]any) (*WS, error) {
	ctx, cancel := context.WithCancel(context.Background())
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.URL, "http")+"/graphql", &websocket.DialOptions{
		Subprotocols: []string{"graphql-transport-ws"},
	})
	if err != nil {
		cancel()
		return nil, err
	}
	w := &WS{conn: conn, ctx: ctx, cancel: cancel}
	fail := func(err error) (*WS, error) {
		w.conn.CloseNow()
		cancel()
		return nil, err
	}
	if err := wsjson.Write(ctx, conn, Message{Type: "connection_init", Payload: mustJSON(s.initPayload(nil))}); err != nil {
		return fail(err)
	}
	if m, err := w.TryRead(10 * time.Second); err != nil || m.Type != "connection_ack" {
		return fail(fmt.Errorf("no ack: %v %v", m.Type, err))
	}
	err = wsjson.Write(ctx, conn, Message{ID: "1", Type: "subscribe", Payload: mustJSON(map[string]any{
		"query": query, "variables": vars})})
	if err != nil {
		return fail(err)
	}
	return w, nil
}

// TryRead is Read returning the error instead of failing the test.
func (w *WS) TryRead(timeout time.Duration) (Message, error) {
	for {
		ctx, cancel := context.WithTimeout(w.ctx, timeout)
		var m Message
		err := wsjson.Read(ctx, w.conn, &m)
		cancel()
		if err != nil {
			return m, err
		}
		switch m.Type {
		case "ping":
			_ = wsjson.Write(w.ctx, w.conn, Message{Type: "pong"})
			continue
		case "pong", "ka":
			continue
		}
		return m, nil
	}
}
