package app

import (
	"context"
	"sync"
)

// A replica that is shutting down drains (server.go runs the sequence):
// Drain turns /readyz to 503 so that a load balancer stops sending it new
// work; the listener closes; requests in flight finish; then GoAway ends
// every subscription with "resume elsewhere from your cursor" (graph's
// GoingAway), and the process exits once the streams have closed.

// Drain makes /readyz answer 503 from now on; everything else is served
// as before.
func (a *App) Drain() { a.draining.Store(true) }

// Draining reports whether Drain was called.
func (a *App) Draining() bool { return a.draining.Load() }

// GoAway waits for the requests in flight (queries and mutations, not
// streams) to finish, then ends every subscription so that its client
// resumes on another replica, and waits for them to close. It gives up when
// ctx ends.
func (a *App) GoAway(ctx context.Context) error {
	if err := a.requests.wait(ctx); err != nil {
		return err
	}
	return a.goingAway.Announce(ctx)
}

// RequestsInFlight counts the requests being served that are not streams.
func (a *App) RequestsInFlight() int {
	a.requests.mu.Lock()
	defer a.requests.mu.Unlock()
	return a.requests.n
}

// inFlight counts work under way and lets one wait until there is none.
type inFlight struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to 0; nil while n is 0 and nobody waits
}

// add counts one piece of work until the function it returns is called.
func (f *inFlight) add() func() {
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.n--
		if f.n == 0 && f.idle != nil {
			close(f.idle)
			f.idle = nil
		}
	}
}

// wait returns once nothing is in flight, or ctx's error when it ends first.
func (f *inFlight) wait(ctx context.Context) error {
	f.mu.Lock()
	if f.n == 0 {
		f.mu.Unlock()
		return nil
	}
	if f.idle == nil {
		f.idle = make(chan struct{})
	}
	idle := f.idle
	f.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
