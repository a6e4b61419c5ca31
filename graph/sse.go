package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"

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

// Do serves one stream.
func (t sseTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	p, ok := access.FromContext(r.Context())
	if !ok {
		t.SSE.Do(w, r, exec) // authorizeOperation refuses it
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
	fmt.Fprintf(s.ResponseWriter, "event: next\ndata: %s\n\n", b)
	if complete {
		fmt.Fprint(s.ResponseWriter, "event: complete\n\n")
	}
	_ = http.NewResponseController(s.ResponseWriter).Flush()
}
