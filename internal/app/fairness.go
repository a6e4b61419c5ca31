package app

import (
	"net/http"
	"runtime"
	"strconv"
	"time"

	"sessiongraph/internal/access"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/config"
)

// admit holds each authenticated request to its key's and tenant's limits
// (access.Fairness): over them it answers 429 RATE_LIMITED with
// Retry-After before any work. A query or mutation counts in flight until
// it is answered; a little early for its tokens, it waits for them, and it
// runs once it has its slot (access.Slots), waiting its key's turn for one; a subscription stream (SSE) counts against the rate
// when it starts, and against the subscription caps while it lasts.
// WebSocket operations are admitted by the socket's transport
// (graph/server.go).
func (a *App) admit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := access.FromContext(r.Context())
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		operation := !isStream(r)
		release, wait, refused := a.fairness.Admit(p, operation)
		if refused != nil {
			w.Header().Set("Retry-After", strconv.Itoa(refused.RetryAfterSeconds()))
			writeError(w, http.StatusTooManyRequests, apperr.RateLimited, refused.Err.Message)
			return
		}
		defer release()
		if operation {
			err := access.Delay(r.Context(), wait)
			giveBack := func() {}
			if err == nil {
				giveBack, err = a.slots.Take(r.Context(), p)
			}
			if err != nil {
				w.Header().Set("Retry-After", "1")
				writeError(w, http.StatusServiceUnavailable, apperr.Timeout,
					"the request waited past its deadline for its turn to run, which this replica's other requests held: retry after the time Retry-After gives")
				return
			}
			defer giveBack()
		}
		next.ServeHTTP(w, r)
	})
}

// operationsPerCore is how many queries and mutations run at once per core
// when -operations is 0, keyOperationsPerCore how many of them one key's
// when -key-operations is 0 (never all of them). An operation alternates
// between the server's CPU, PostgreSQL's and waiting (a round trip, a
// commit's flush), so a key alone needs more than one per core to keep the
// cores busy: on 2 cores, with the rates lifted, a key alone ran 790-830
// operations a second at two at once and 1,060 at three, against 1,380-1,490
// unbounded. Beside other tenants working, its bound is divided among them
// (access.Slots): a flood beside one victim runs one at a time on 2 cores.
const (
	operationsPerCore    = 2
	keyOperationsPerCore = 2
)

// newSlots returns the replica's operation slots (access.Slots) of the
// settings, sized from the cores where they say 0, a tenant working for
// linger after its last operation.
func newSlots(f config.Fairness, linger time.Duration) *access.Slots {
	size, keyMost := slotSizes(f.Operations, f.KeyOperations, runtime.GOMAXPROCS(0))
	return access.NewSlots(size, keyMost, linger)
}

// slotSizes is the number of operation slots and one key's most: size if
// positive, else operationsPerCore per core; keyMost if positive, else
// keyOperationsPerCore per core, and never all the slots but one of
// several, so that another tenant's operation always finds one free.
func slotSizes(size, keyMost, cores int) (int, int) {
	if size <= 0 {
		size = operationsPerCore * max(1, cores)
	}
	if keyMost <= 0 {
		keyMost = min(keyOperationsPerCore*max(1, cores), max(1, size-1))
	}
	return size, min(keyMost, size)
}

// Slots returns the replica's operation slots, for tests that watch who
// waits for one.
func (a *App) Slots() *access.Slots { return a.slots }
