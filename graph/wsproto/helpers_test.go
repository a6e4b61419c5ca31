package wsproto_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/testserver"
	"github.com/coder/websocket"

	"sessiongraph/graph/wsproto"
)

// readTimeout bounds every wait for a server message; generous for -race on a small machine.
const readTimeout = 5 * time.Second

// serve runs gqlgen's codegen-free test server with tr as its only transport
// and returns it with its ws:// URL.
func serve(t *testing.T, tr *wsproto.Transport) (*testserver.TestServer, string) {
	t.Helper()
	return serveAround(t, tr, nil)
}

// serveAround is serve with an operation middleware, installed before the
// server starts so that no request races with it.
func serveAround(t *testing.T, tr *wsproto.Transport, around graphql.OperationMiddleware) (*testserver.TestServer, string) {
	t.Helper()
	srv := testserver.New()
	if around != nil {
		srv.AroundOperations(around)
	}
	srv.AddTransport(tr)
	return srv, serveHandler(t, srv)
}

func serveHandler(t *testing.T, h http.Handler) string {
	t.Helper()
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return "ws" + strings.TrimPrefix(hs.URL, "http")
}

// client is a raw graphql-transport-ws client that checks each server message verbatim.
type client struct {
	t  *testing.T
	ws *websocket.Conn
}

func dial(t *testing.T, url string) *client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{wsproto.Subprotocol}})
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	if resp.Body != nil {
		_ = resp.Body.Close()
	}
	if got := ws.Subprotocol(); got != wsproto.Subprotocol {
		t.Fatalf("negotiated subprotocol %q, want %q", got, wsproto.Subprotocol)
	}
	c := &client{t: t, ws: ws}
	t.Cleanup(func() { _ = ws.CloseNow() })
	return c
}

// send writes one raw text message.
func (c *client) send(raw string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	if err := c.ws.Write(ctx, websocket.MessageText, []byte(raw)); err != nil {
		c.t.Fatalf("send %s: %v", raw, err)
	}
}

// expect reads the next message and checks it is exactly want.
func (c *client) expect(want string) {
	c.t.Helper()
	got, err := c.read()
	if err != nil {
		c.t.Fatalf("waiting for %s: %v", want, err)
	}
	if got != want {
		c.t.Fatalf("message\n got: %s\nwant: %s", got, want)
	}
}

// expectClose reads until the server closes the socket and checks the close frame.
func (c *client) expectClose(code int, reason string) {
	c.t.Helper()
	got, err := c.read()
	if err == nil {
		c.t.Fatalf("got message %s, want close %d %q", got, code, reason)
	}
	var ce websocket.CloseError
	if !errors.As(err, &ce) {
		c.t.Fatalf("want close %d %q, got %v", code, reason, err)
	}
	if int(ce.Code) != code || ce.Reason != reason {
		c.t.Fatalf("close\n got: %d %q\nwant: %d %q", ce.Code, ce.Reason, code, reason)
	}
}

func (c *client) read() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), readTimeout)
	defer cancel()
	_, b, err := c.ws.Read(ctx)
	return string(b), err
}

// acked sends connection_init and checks the ack.
func (c *client) acked() *client {
	c.t.Helper()
	c.send(`{"type":"connection_init"}`)
	c.expect(`{"type":"connection_ack"}`)
	return c
}

// sync round-trips a ping, so every message sent before it has been handled.
func (c *client) sync() {
	c.t.Helper()
	c.send(`{"type":"ping"}`)
	c.expect(`{"type":"pong"}`)
}

// close closes the socket the way graphql-ws does, with 1000.
func (c *client) close() {
	c.t.Helper()
	if err := c.ws.Close(websocket.StatusNormalClosure, ""); err != nil {
		c.t.Fatalf("close: %v", err)
	}
}

// settleGoroutines waits until the goroutine count is back to at most want.
func settleGoroutines(t *testing.T, want int) {
	t.Helper()
	if !waitFor(10*time.Second, func() bool { return runtime.NumGoroutine() <= want }) {
		buf := make([]byte, 1<<20)
		t.Fatalf("goroutines: %d, want at most %d\n%s", runtime.NumGoroutine(), want, buf[:runtime.Stack(buf, true)])
	}
}

// waitFor checks cond every few milliseconds until it holds (true) or
// within has passed (false).
func waitFor(within time.Duration, cond func() bool) bool {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(within)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			return cond()
		}
	}
	return true
}
