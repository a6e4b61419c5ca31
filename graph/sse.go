package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"sessiongraph/internal/access"
)

// sseTransport is gqlgen's SSE transport (the graphql-sse protocol's
// distinct connections), held by the key that opened the stream: when the
// key is revoked, the stream ends with a last event whose error carries a
// code (UNAUTHENTICATED), then complete, as graphql-sse clients learn of
// any other error. When the server goes away, the stream's last event's
// error is UNAVAILABLE (errGoingAway) and no complete follows: the stream is
// not over, and its client resumes it elsewhere from its cursor.
type sseTransport struct {
	transport.SSE
	keys      *access.Keys
	goingAway *GoingAway
}

// Bounds of what the server holds for an SSE client that stops reading.
const (
	// sseSendBuffer is a stream's kernel send buffer, in bytes (which Linux
	// doubles); otherwise the kernel grows it to net.ipv4.tcp_wmem's maximum
	// (4 MB by default) before the subscription's own buffer fills and the
	// hub cuts it off as too slow.
	sseSendBuffer = 32 << 10
	// sseWriteTimeout bounds one write: a client that takes nothing for that
	// long loses its connection, as over WebSocket.
	sseWriteTimeout = 10 * time.Second
)

type connKey struct{}

// ConnContext, set as the http.Server's ConnContext, lets an SSE stream
// bound its connection's send buffer.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// boundSendBuffer fixes the send buffer of the TCP connection r came on.
func boundSendBuffer(r *http.Request) {
	if c, ok := r.Context().Value(connKey{}).(*net.TCPConn); ok {
		_ = c.SetWriteBuffer(sseSendBuffer)
	}
}

// Do serves one stream, behind the same body checks as POST, so that a
// malformed body is refused with a short message rather than echoed back
// (gqlgen's own message quotes the whole body).
func (t sseTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	body, err := readBody(r.Body)
	if err == nil {
		_, err = decodeBody(body)
	}
	if err != nil {
		refuseRequest(w, mediaJSON, err)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	boundSendBuffer(r)
	// The writes' deadline must not outlive the stream: the connection may
	// serve another request.
	defer func() { _ = http.NewResponseController(w).SetWriteDeadline(time.Time{}) }()
	p, ok := access.FromContext(r.Context())
	if !ok {
		t.SSE.Do(w, r, exec) // admit (fairness.go) refuses it
		return
	}
	held, err := t.keys.Hold(r.Context(), p)
	if err != nil {
		// Revoked since the request authenticated: the stream ends at once.
		out := &heldStream{ResponseWriter: w}
		out.end(r.Context(), exec, err, true)
		return
	}
	defer t.goingAway.open()()
	live, goAway := context.WithCancelCause(held)
	defer goAway(nil)
	stop := context.AfterFunc(t.goingAway.ctx, func() { goAway(errGoingAway) })
	defer stop()
	out := &heldStream{ResponseWriter: w, held: live}
	t.SSE.Do(out, r.WithContext(live), exec)
	if out.cut() {
		why := context.Cause(live)
		out.end(r.Context(), exec, why, why != errGoingAway)
	}
}

// heldStream passes the transport's writes through until the stream's hold
// ends; from then on it drops them (the transport's complete among them),
// so that the stream's own last event can go out in their place.
type heldStream struct {
	http.ResponseWriter
	held context.Context

	mu      sync.Mutex
	wrote   bool // the response has started
	dropped bool
}

func (s *heldStream) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held.Err() != nil {
		s.dropped = true
		return len(b), nil
	}
	s.wrote = true
	// Not every ResponseWriter takes a deadline (ErrNotSupported): then
	// the write is as unbounded as before.
	_ = http.NewResponseController(s.ResponseWriter).SetWriteDeadline(time.Now().Add(sseWriteTimeout))
	return s.ResponseWriter.Write(b)
}

// Flush lets the transport stream through the wrapper.
func (s *heldStream) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = http.NewResponseController(s.ResponseWriter).Flush()
}

// cut reports whether the hold ended before the transport had finished,
// because the key was revoked or the server is going away: the transport's
// complete was dropped.
func (s *heldStream) cut() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	cause := context.Cause(s.held)
	return s.dropped && (errors.Is(cause, access.ErrKeyRevoked) || cause == errGoingAway)
}

// end writes why the stream ends, presented like any error, and completes
// it when it is over (not when the client should resume it elsewhere).
func (s *heldStream) end(ctx context.Context, exec graphql.GraphExecutor, why error, complete bool) {
	resp := exec.DispatchError(ctx, gqlerror.List{{Message: why.Error(), Err: why}})
	b, err := json.Marshal(resp)
	if err != nil {
		panic(fmt.Sprintf("encode the last event: %v", err))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.wrote {
		s.Header().Set("Content-Type", "text/event-stream")
	}
	_ = http.NewResponseController(s.ResponseWriter).SetWriteDeadline(time.Now().Add(sseWriteTimeout))
	fmt.Fprintf(s.ResponseWriter, "event: next\ndata: %s\n\n", b)
	if complete {
		fmt.Fprint(s.ResponseWriter, "event: complete\n\n")
	}
	_ = http.NewResponseController(s.ResponseWriter).Flush()
}
