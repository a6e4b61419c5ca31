package app

import (
	"context"
	"net/http"
)

// door is the HTTP frame of every route, one frame: it gives the request
// its id, counts it (in flight, for a drain; in the metrics) and logs it
// once done (received, logRequest); on the routes that take operations or
// show the server's traffic (/graphql, /mcp, /metrics) it also answers CORS
// (for browsers, on /graphql), bounds the body (limits.go), and
// authenticates the key (auth.go). What it lets through, next admits
// operation by operation once it knows what each is (access.Admission):
// GraphQL's transports in one operation middleware, MCP in its receiving
// middleware.
func (a *App) door(next http.Handler, way entrance) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isStream(r) {
			defer a.requests.add()()
		}
		rec, r, start := a.received(w, r)
		if in, ok, cancel := a.enter(rec, r, way); ok {
			defer cancel()
			next.ServeHTTP(rec, in)
		}
		a.logRequest(rec, r, start)
	})
}

// enter lets a request through way's checks, with the request's deadline
// (cancel ends it) and its key's principal in its context; false when a
// check answered it.
func (a *App) enter(w http.ResponseWriter, r *http.Request, way entrance) (*http.Request, bool, context.CancelFunc) {
	cancel := func() {}
	if way.open {
		return r, true, cancel
	}
	if way.browsers && a.cors(w, r) {
		return r, false, cancel
	}
	if !a.limitBody(w, r, way.oneOperation) {
		return r, false, cancel
	}
	if !isStream(r) {
		// Received whole, the request runs to its end whatever its client
		// does (half-closes, disconnects): not the connection's
		// cancellation, only the request's deadline. A stream ends with
		// its client.
		var ctx context.Context
		ctx, cancel = context.WithTimeout(context.WithoutCancel(r.Context()), a.cfg.RequestTimeout)
		r = r.WithContext(ctx)
	}
	r, ok := a.authenticate(w, r, way.sockets)
	return r, ok, cancel
}

// entrance is what differs between the routes behind a door.
type entrance struct {
	// open: no check at all (the dashboard's pages, GraphiQL, health).
	open bool
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
	openEntrance   = entrance{open: true}
)
