// Package wsproto serves GraphQL over WebSocket with the graphql-transport-ws
// protocol (the one the npm graphql-ws library speaks), as a gqlgen transport.
//
// gqlgen's own transport.Websocket speaks the protocol's messages but not its
// close codes (4400, 4401, 4403, 4408, 4409, 4429), which graphql-ws clients
// rely on to tell a fatal error from a reconnectable one.
//
// Protocol: https://github.com/enisdenjo/graphql-ws/blob/master/PROTOCOL.md
package wsproto

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/coder/websocket"
)

// Subprotocol is the WebSocket subprotocol this transport speaks.
const Subprotocol = "graphql-transport-ws"

// Close codes the protocol defines for a server that kicks a client off.
const (
	CloseBadRequest          = 4400 // an invalid message
	CloseUnauthorized        = 4401 // subscribe before connection_ack
	CloseForbidden           = 4403 // Init rejected the connection
	CloseInitTimeout         = 4408 // no connection_init within InitTimeout
	CloseSubscriberExists    = 4409 // subscribe with an id that is still active
	CloseTooManyInitRequests = 4429 // a second connection_init
)

// CloseServiceRestart (1012, RFC 6455's registry) closes every connection
// of a server that is going away: its operations are not over, and the
// client subscribes again, on another server, from where it was. graphql-ws
// clients reconnect after it; it never follows a complete.
const CloseServiceRestart = 1012

const (
	defaultInitTimeout  = 3 * time.Second
	defaultReadLimit    = 1 << 20
	defaultWriteTimeout = 10 * time.Second
	defaultSendBuffer   = 32 << 10
)

// Transport serves graphql-transport-ws connections; add it with (*handler.Server).AddTransport.
type Transport struct {
	// InitTimeout is how long a client has to send connection_init (default 3s);
	// on expiry the socket closes with 4408 "Connection initialisation timeout".
	InitTimeout time.Duration

	// PingInterval is how often the server sends {"type":"ping"} once the
	// connection is acknowledged; 0 sends none. A client's ping is always answered with pong.
	PingInterval time.Duration

	// Init authorizes a connection from its connection_init payload (nil when
	// the client sent none). It returns the context every operation of the
	// connection runs in, derived from ctx, or an error: the socket then closes
	// with 4403 "Forbidden", or with the code and reason of a *CloseError.
	// A nil Init accepts every connection.
	//
	// The connection lasts no longer than the context Init returned: when it
	// ends first (a revoked credential, say), every operation ends and the
	// socket closes with the code and reason of its cause when that is a
	// *CloseError, else with 4403 and "Forbidden: " and the cause's message.
	Init func(ctx context.Context, payload map[string]any) (context.Context, error)

	// Admit, when set, is asked before each operation runs, with the
	// operation's context (graphql.GetOperationContext works on it). An
	// error refuses the operation with an error message for its id,
	// presented like any other error, and the connection goes on; else
	// release is called once the operation has ended.
	Admit func(ctx context.Context) (release func(), err error)

	// AcceptOptions configures the WebSocket handshake (origin patterns,
	// compression). Its Subprotocols are ignored: the transport offers only Subprotocol.
	AcceptOptions websocket.AcceptOptions

	// ReadLimit is the largest message, in bytes, a client may send (default 1 MB);
	// a larger one closes the socket with 1009.
	ReadLimit int64

	// WriteTimeout bounds one message write (default 10s). A client that does
	// not take a message within it is disconnected, so it holds up only itself.
	WriteTimeout time.Duration

	// SendBuffer is the kernel send buffer of each TCP connection, in bytes
	// (default 32 KiB, which Linux doubles). With the subscriptions' own
	// buffers it bounds what the server holds for a client that stops
	// reading, instead of the megabytes the kernel would grow it to; a
	// subscriber that still falls behind is told SUBSCRIBER_TOO_SLOW.
	SendBuffer int

	// MutationTimeout, when set, detaches a mutation from the socket: once
	// its subscribe message has arrived, it runs to its end (its commit)
	// within MutationTimeout, even when the client completes it or the
	// socket closes first; only its answer is then lost. Unset, a mutation
	// ends with its socket.
	MutationTimeout time.Duration

	// GoingAway, when set, closes every connection with 1012 Service
	// Restart once it ends (a connection opened later at once), without
	// completing its operations.
	GoingAway context.Context

	// Track, when set, is called as each connection is accepted; the
	// function it returns is called once the connection has ended, so that
	// a server going away can wait for its sockets to close.
	Track func() (untrack func())
}

// CloseError, returned by Init, closes the socket with its own code and reason
// instead of 4403 "Forbidden".
type CloseError struct {
	Code   int
	Reason string
}

func (e *CloseError) Error() string {
	return fmt.Sprintf("websocket close %d: %s", e.Code, e.Reason)
}

var _ graphql.Transport = (*Transport)(nil)

// Supports reports whether r is a WebSocket upgrade that offers Subprotocol.
func (t *Transport) Supports(r *http.Request) bool {
	return r.Method == http.MethodGet &&
		headerHasToken(r.Header, "Upgrade", "websocket", strings.EqualFold) &&
		headerHasToken(r.Header, "Sec-WebSocket-Protocol", Subprotocol, func(a, b string) bool { return a == b })
}

// Do upgrades r and serves the connection on a goroutine of its own, which
// ends, with every goroutine it started, when the connection ends.
func (t *Transport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	opts := t.AcceptOptions
	opts.Subprotocols = []string{Subprotocol}
	hijacked := &smallBuffers{ResponseWriter: w, sendBuffer: t.sendBuffer()}
	ws, err := websocket.Accept(hijacked, r, &opts)
	if err != nil {
		return // Accept has already answered with an HTTP error.
	}
	if ws.Subprotocol() != Subprotocol {
		_ = ws.Close(websocket.StatusProtocolError, "subprotocol "+Subprotocol+" required")
		return
	}
	readLimit := t.ReadLimit
	if readLimit <= 0 {
		readLimit = defaultReadLimit
	}
	ws.SetReadLimit(readLimit)

	// The connection lives on its own goroutine and the handler returns: the
	// socket is hijacked, and an idle subscriber should not keep the HTTP
	// handler's deep stack and the request parsing state alive.
	untrack := func() {}
	if t.Track != nil {
		untrack = t.Track()
	}
	c := newConnection(t, ws, hijacked.conn, r, exec)
	go func() {
		defer untrack()
		c.serve()
	}()
}

func (t *Transport) initTimeout() time.Duration {
	if t.InitTimeout > 0 {
		return t.InitTimeout
	}
	return defaultInitTimeout
}

func (t *Transport) sendBuffer() int {
	if t.SendBuffer > 0 {
		return t.SendBuffer
	}
	return defaultSendBuffer
}

func (t *Transport) writeTimeout() time.Duration {
	if t.WriteTimeout > 0 {
		return t.WriteTimeout
	}
	return defaultWriteTimeout
}

// headerHasToken reports whether any comma-separated value of header name equals token.
func headerHasToken(h http.Header, name, token string, equal func(a, b string) bool) bool {
	for _, v := range h.Values(name) {
		for part := range strings.SplitSeq(v, ",") {
			if equal(strings.TrimSpace(part), token) {
				return true
			}
		}
	}
	return false
}
