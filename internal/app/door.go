package app

import (
	"context"
	"net/http"
)

// door is the HTTP door of /graphql, /mcp and /metrics, one frame: it
// answers CORS (for browsers, on /graphql), bounds the body (limits.go),
// and authenticates the key (auth.go). What it lets through, next admits
// operation by operation once it knows what each is (access.Admission):
// GraphQL's transports in one operation middleware, MCP in its receiving
// middleware.
func (a *App) door(next http.Handler, way entrance) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if way.browsers && a.cors(w, r) {
			return
		}
		if !a.limitBody(w, r, way.oneOperation) {
			return
		}
		if !isStream(r) {
			// Received whole, the request runs to its end whatever its client
			// does (half-closes, disconnects): not the connection's
			// cancellation, only the request's deadline. A stream ends with
			// its client.
			ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), a.cfg.RequestTimeout)
			defer cancel()
			r = r.WithContext(ctx)
		}
		r, ok := a.authenticate(w, r, way.sockets)
		if !ok {
			return
		}
		next.ServeHTTP(w, r)
	})
}

// entrance is what differs between the routes behind a door.
type entrance struct {
	// browsers: CORS is answered (GraphQL's).
	browsers bool
	// sockets: a WebSocket comes in without a key and sends it in
	// connection_init (GraphQL's); elsewhere only the header carries one,
	// and a 401 speaks only of it.
	sockets bool
	// oneOperation: a JSON array of operations (batching) is refused here
	// (GraphQL's); MCP refuses a batch itself, as a JSON-RPC error.
	oneOperation bool
}

var (
	graphqlEntrance = entrance{browsers: true, sockets: true, oneOperation: true}
	// headerEntrance is MCP's and the metrics'.
	headerEntrance = entrance{}
)
