package graph

import (
	"context"
	"sync"

	"sessiongraph/internal/apperr"
)

// GoingAway ends the live subscriptions of a replica that is shutting down
// with a signal that means "this stream is not over: resume it elsewhere
// from your cursor", never with complete, which says a stream is over. A
// WebSocket closes with 1012 Service Restart; an SSE stream sends a last
// event whose error is UNAVAILABLE (errGoingAway) and ends without
// complete. Clients subscribe again from the last cursor they saw, on
// whichever replica the load balancer picks.
type GoingAway struct {
	ctx    context.Context
	cancel context.CancelFunc

	mu        sync.Mutex
	streams   int           // WebSocket connections and SSE streams open
	announced bool          // Announce was called
	ended     chan struct{} // closed once announced and no stream is open
}

// NewGoingAway returns a GoingAway that has not been announced.
func NewGoingAway() *GoingAway {
	ctx, cancel := context.WithCancel(context.Background())
	return &GoingAway{ctx: ctx, cancel: cancel, ended: make(chan struct{})}
}

// errGoingAway is the SSE stream's last event: UNAVAILABLE, which every
// client already retries, with a message that says what to do.
var errGoingAway = apperr.New(apperr.Unavailable,
	"this server is shutting down: subscribe again from the last cursor you received (another replica serves it)")

// Announce ends every stream open now or opened from now on, and waits
// until all have ended or ctx ends.
func (g *GoingAway) Announce(ctx context.Context) error {
	g.mu.Lock()
	if !g.announced {
		g.announced = true
		g.endedIfIdle()
	}
	g.mu.Unlock()
	g.cancel()
	select {
	case <-g.ended:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Streams counts the streams open now.
func (g *GoingAway) Streams() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.streams
}

// open counts a stream until the function it returns is called.
func (g *GoingAway) open() func() {
	g.mu.Lock()
	g.streams++
	g.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			g.streams--
			g.endedIfIdle()
			g.mu.Unlock()
		})
	}
}

// endedIfIdle closes ended once announced with no stream open; g.mu is held.
func (g *GoingAway) endedIfIdle() {
	if !g.announced || g.streams > 0 {
		return
	}
	select {
	case <-g.ended:
	default:
		close(g.ended)
	}
}
