package app

import (
	"net/http"
	"net/url"
	"path"
	"strings"

	"sessiongraph/internal/apperr"
)

// corsMaxAge is how long, in seconds, a browser may reuse a preflight's answer.
const corsMaxAge = "600"

// cors lets pages of the -allowed-origins (the host patterns WebSockets
// accept too) call /graphql from another origin: it answers their
// preflights, and reports it did, and marks the answers they may read.
// Other origins get no CORS header, so their browsers keep the answers
// from them. Keys travel in the Authorization header, never in cookies: no
// credentials are allowed.
func (a *App) cors(w http.ResponseWriter, r *http.Request) (answered bool) {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	w.Header().Add("Vary", "Origin")
	allowed := a.originAllowed(origin)
	if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
		if !allowed {
			writeError(w, http.StatusForbidden, apperr.Forbidden,
				"this origin may not call the API from a browser: the server's -allowed-origins does not name it")
			return true
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, X-Request-Id, traceparent, tracestate")
		h.Set("Access-Control-Max-Age", corsMaxAge)
		w.WriteHeader(http.StatusNoContent)
		return true
	}
	if allowed {
		w.Header().Set("Access-Control-Allow-Origin", origin)
		w.Header().Set("Access-Control-Expose-Headers", "Retry-After, X-Request-Id")
	}
	return false
}

// originAllowed reports whether origin's host matches one of the
// -allowed-origins patterns (path.Match syntax, as for WebSockets).
func (a *App) originAllowed(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	host := strings.ToLower(u.Host)
	for _, pattern := range a.cfg.AllowedOrigins {
		if ok, err := path.Match(strings.ToLower(pattern), host); ok && err == nil {
			return true
		}
	}
	return false
}
