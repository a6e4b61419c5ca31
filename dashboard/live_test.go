package dashboard_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
	"sessiongraph/internal/config"
)

// restartable is a sessiongraph server on a fixed address that a test can
// stop and start again, as an operator restarts the process: the browser
// keeps the same URL and must find the server back by itself.
type restartable struct {
	t    *testing.T
	dsn  string
	addr string
	URL  string

	app   *app.App
	srv   *http.Server
	mu    sync.Mutex
	conns []net.Conn // hijacked WebSockets, which http.Server.Shutdown leaves open
}

// startRestartable serves the database at dsn on a fresh local port.
func startRestartable(t *testing.T, dsn string) *restartable {
	t.Helper()
	r := &restartable{t: t, dsn: dsn, addr: "127.0.0.1:0"}
	r.start()
	r.URL = "http://" + r.addr
	t.Cleanup(r.stop)
	return r
}

// start serves again on the address of the first start.
func (r *restartable) start() {
	r.t.Helper()
	settings := config.Defaults()
	settings.DatabaseURL = r.dsn
	a, err := app.New(context.Background(), app.Config{
		Settings: settings,
		NoReaper: true,
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	require.NoError(r.t, err)
	var ln net.Listener
	// The old socket may linger a moment after a stop.
	require.Eventually(r.t, func() bool {
		ln, err = net.Listen("tcp", r.addr)
		return err == nil
	}, 10*time.Second, 50*time.Millisecond, "listen on %s again", r.addr)
	r.addr = ln.Addr().String()
	r.app = a
	r.srv = &http.Server{
		Handler:           a.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		ConnState: func(c net.Conn, s http.ConnState) {
			if s == http.StateHijacked {
				r.mu.Lock()
				r.conns = append(r.conns, c)
				r.mu.Unlock()
			}
		},
	}
	go func() { _ = r.srv.Serve(ln) }()
}

// stop shuts down as the production binary does (server.go): a graceful
// http.Server.Shutdown, then the app's Close, which ends every subscription
// (the client gets graphql-transport-ws complete), then the process exits,
// which drops the WebSockets it still holds.
func (r *restartable) stop() {
	if r.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.srv.Shutdown(ctx)
	_ = r.app.Close()
	time.Sleep(100 * time.Millisecond) // the completes reach the socket before the process would exit
	r.mu.Lock()
	for _, c := range r.conns {
		_ = c.Close()
	}
	r.conns = nil
	r.mu.Unlock()
	r.srv, r.app = nil, nil
}

// Live updates survive a server restart: the server completes the page's
// subscription and goes away, the session changes while it is down, and
// once a server listens again the page resubscribes from its last event,
// shows the change and says Live, without a reload.
func TestDashboardLiveAfterServerRestart(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	id := openSession(t, s, map[string]any{"tenant": "acme", "externalKey": "restart-chat"})
	r := &agent{t: t, s: s, id: id}
	r.begin("first question")
	r.end("first answer", nil)

	srv := startRestartable(t, s.DSN)
	b := newBrowser(t)
	b.signIn(srv.URL, s.AdminKey)
	b.waitFor("the sessions list", `document.querySelector("#sessions") !== null`)
	b.run("open the session", navigate("#/sessions/"+id))
	b.waitFor("the session at turn 1", textOf("#session-turn")+` === "1"`)
	b.waitFor("live updates", `document.querySelector("#live").dataset.state === "live"`)

	srv.stop()
	b.waitFor("the page notices", `document.querySelector("#live").dataset.state !== "live"`)
	r.begin("asked while the dashboard's server was down")
	srv.start()

	b.waitFor("the change made meanwhile", textOf("#session-turn")+` === "2" && document.querySelectorAll("#turns .turn").length === 2`)
	b.waitFor("its event", `[...document.querySelectorAll("#events tbody tr")].some(tr => tr.dataset.kind === "turn.began")`)
	b.waitFor("live again", `document.querySelector("#live").dataset.state === "live" && `+textOf("#live")+` === "Live"`)

	// And it stays live: a change after the restart shows too.
	r.end("answered after the restart", nil)
	b.waitFor("the turn completed, live", textOf(`#turns .turn[data-turn="2"] .badge`)+` === "COMPLETED"`)
	requireOneLoad(t, b)
	require.Empty(t, b.pageErrors(), "the page logged no error")
}

// navigate follows a link inside the dashboard: a hash route, no page load.
func navigate(hash string) chromedp.Action {
	return chromedp.Evaluate(fmt.Sprintf(`location.hash = %q`, hash), nil)
}

// requireOneLoad checks that everything happened in place, without a reload.
func requireOneLoad(t *testing.T, b *browser) {
	t.Helper()
	var loads int
	b.run("count page loads", chromedp.Evaluate(`performance.getEntriesByType("navigation").length`, &loads))
	require.Equal(t, 1, loads, "the page updated in place: no reload")
}
