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

// stop shuts down as the production binary does (server.go's drain): the
// listener closes, requests in flight finish, then every WebSocket closes
// with 1012 Service Restart (no complete: the page resumes from its
// cursor), and the app closes.
func (r *restartable) stop() {
	if r.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	r.app.Drain()
	closed := make(chan error, 1)
	go func() { closed <- r.srv.Shutdown(ctx) }()
	require.NoError(r.t, r.app.GoAway(ctx), "every request and stream ended")
	require.NoError(r.t, <-closed)
	_ = r.app.Close()
	r.mu.Lock()
	for _, c := range r.conns {
		_ = c.Close()
	}
	r.conns = nil
	r.mu.Unlock()
	r.srv, r.app = nil, nil
}

// Live updates survive a server restart: the server closes the page's
// socket with 1012 Service Restart and goes away, the session changes while it is down, and
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
	b.signInToSession(srv.URL, s.AdminKey, id)
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

// newestEvent is the sequence of the session's newest event, as the API says.
func newestEvent(t *testing.T, s *apitest.Server, id string) int {
	t.Helper()
	var out struct {
		Session struct {
			Events struct {
				Edges []struct{ Node struct{ Sequence int } }
			}
		}
	}
	s.MustDo(t, `query($id: ID!) { session(id: $id) { events(last: 1, orderBy: [{field: SEQUENCE}]) { edges { node { sequence } } } } }`, map[string]any{"id": id}, &out)
	require.Len(t, out.Session.Events.Edges, 1)
	return out.Session.Events.Edges[0].Node.Sequence
}

// A burst of turns keeps the view moving: the header's turn advances while
// the burst goes on, and a moment after it ends the header, the timeline and
// the event log all show its last turn and event.
func TestDashboardFollowsABurst(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	id := openSession(t, s, map[string]any{"tenant": "acme", "externalKey": "burst-chat"})
	r := &agent{t: t, s: s, id: id}
	b := newBrowser(t)
	b.signInToSession(s.URL, s.AdminKey, id)
	b.waitFor("the empty session", textOf("#session-turn")+` === "0" && `+textOf("#turns")+` === "No turns yet."`)
	b.waitFor("live updates", `document.querySelector("#live").dataset.state === "live"`)

	done := make(chan struct{})
	go func() {
		defer close(done)
		for n := 1; n <= 60; n++ {
			r.begin(fmt.Sprintf("question %d", n))
			r.end(fmt.Sprintf("answer %d", n), nil)
		}
	}()
	// While the burst goes on, the header follows it.
	seen := map[string]bool{}
	for burst := true; burst; {
		select {
		case <-done:
			burst = false
		case <-time.After(50 * time.Millisecond):
			var turn string
			b.run("read the header's turn", chromedp.Evaluate(textOf("#session-turn"), &turn))
			seen[turn] = true
		}
	}
	var during []string
	for turn := range seen {
		if turn != "0" && turn != "60" && turn != "" {
			during = append(during, turn)
		}
	}
	require.NotEmpty(t, during, "the header advanced during the burst, not only at its end: it showed %v", seen)

	newest := newestEvent(t, s, id)
	b.waitWithin("the header at turn 60, from the feed", textOf("#session-turn")+` === "60"`, feedDeadline)
	b.waitWithin("turn 60 in the timeline, from the feed", textOf(`#turns .turn[data-turn="60"] .badge`)+` === "COMPLETED"`, feedDeadline)
	b.waitWithin("the newest event on top of the log, from the feed", fmt.Sprintf(`document.querySelector("#events tbody tr")?.dataset.sequence === "%d"`, newest), feedDeadline)
	require.Empty(t, b.pageErrors(), "the page logged no error")
}
