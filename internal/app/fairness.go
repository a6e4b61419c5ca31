package app

import (
	"net/http"
	"strconv"

	"sessiongraph/internal/access"
	"sessiongraph/internal/apperr"
)

// admit holds each authenticated request to its key's and tenant's limits
// (access.Fairness): over them it answers 429 RATE_LIMITED with
// Retry-After before any work. A query or mutation counts in flight until
// it is answered; a subscription stream (SSE) counts against the rate when
// it starts, and against the subscription caps while it lasts. WebSocket
// operations are admitted by the socket's transport (graph/server.go).
func (a *App) admit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := access.FromContext(r.Context())
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		release, refused := a.fairness.Admit(p, !isStream(r))
		if refused != nil {
			w.Header().Set("Retry-After", strconv.Itoa(refused.RetryAfterSeconds()))
			writeError(w, http.StatusTooManyRequests, apperr.RateLimited, refused.Err.Message)
			return
		}
		defer release()
		next.ServeHTTP(w, r)
	})
}
