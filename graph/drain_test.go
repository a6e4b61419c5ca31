package graph_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// goingAwayEvent is an SSE stream's last event when its server goes away.
const goingAwayEvent = `{"data":null,"errors":[{"message":"this server is shutting down: subscribe again from the last cursor you received (another replica serves it)","extensions":{"code":"UNAVAILABLE"}}]}`

func readyz(t *testing.T, s *apitest.Server) int {
	t.Helper()
	res, err := http.Get(s.URL + "/readyz")
	require.NoError(t, err)
	res.Body.Close()
	return res.StatusCode
}

// A draining replica answers /readyz 503, so that its load balancer stops
// sending it work, and serves everything else as before until it stops.
func TestADrainingReplicaIsNotReady(t *testing.T) {
	s := apitest.New(t)
	require.Equal(t, http.StatusOK, readyz(t, s))
	s.Drain()
	assert.Equal(t, http.StatusServiceUnavailable, readyz(t, s))
	var viewer struct{ Viewer struct{ Role string } }
	s.MustDo(t, `{ viewer { role } }`, nil, &viewer)
	assert.Equal(t, "ADMIN", viewer.Viewer.Role, "a draining replica still serves")
}

// A replica going away closes every WebSocket with 1012 Service Restart,
// subscribed or idle, and never completes an operation: its streams are not
// over, and the clients resume them elsewhere from their cursor. GoAway
// returns once every socket has closed.
func TestGoingAwayClosesSocketsWith1012AndNoComplete(t *testing.T) {
	s := apitest.New(t)
	id := open(t, s, map[string]any{"tenant": "acme", "externalKey": "going-away"}).OpenSession.Session.ID
	live := s.DialWS(t, nil)
	sub := live.Subscribe(sessionEventsSub, map[string]any{"id": id, "after": 0})
	assert.Equal(t, "session.opened", nextEvent(t, live, "sessionEvents").Kind)
	idle := s.DialWS(t, nil)

	// Both clients read, as clients do, so that they answer the close
	// handshake GoAway waits for.
	type ending struct {
		closed  websocket.CloseError
		answers []apitest.Message
	}
	ends := make([]chan ending, 2)
	for i, ws := range []*apitest.WS{live, idle} {
		ends[i] = make(chan ending, 1)
		go func() {
			var e ending
			for {
				m, err := ws.TryRead(20 * time.Second)
				if err != nil {
					errors.As(err, &e.closed)
					ends[i] <- e
					return
				}
				if m.ID == sub {
					e.answers = append(e.answers, m)
				}
			}
		}()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, s.GoAway(ctx), "every socket closed")

	for _, end := range ends {
		e := <-end
		assert.Equal(t, websocket.StatusCode(1012), e.closed.Code)
		assert.Equal(t, "Service Restart: this server is shutting down; reconnect and resume from your last cursor", e.closed.Reason)
		assert.Empty(t, e.answers, "no complete, no error: the stream is not over")
	}
	_, err := s.TryDialWS(nil)
	require.ErrorContains(t, err, "StatusServiceRestart", "a socket opened after is closed at once, with 1012")
}

// A replica going away ends an SSE stream with an event that says so (an
// UNAVAILABLE error, which every client retries) and without complete.
func TestGoingAwayEndsSSEStreamsWithAResumeEvent(t *testing.T) {
	s := apitest.New(t)
	id := open(t, s, map[string]any{"tenant": "acme", "externalKey": "sse-going-away"}).OpenSession.Session.ID
	stream := openSSE(t, s, sessionEventsSub, map[string]any{"id": id, "after": 0})
	assert.Equal(t, "next", nextSSE(t, stream).name)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, s.GoAway(ctx), "every stream ended")

	last := nextSSE(t, stream)
	assert.Equal(t, "next", last.name)
	assert.JSONEq(t, goingAwayEvent, last.data)
	assert.True(t, nextSSE(t, stream).ended, "the stream ends without complete")
}

// GoAway ends the streams only once the requests in flight are done.
func TestGoingAwayWaitsForRequestsInFlight(t *testing.T) {
	s := apitest.New(t)
	id := open(t, s, map[string]any{"tenant": "acme", "externalKey": "in-flight"}).OpenSession.Session.ID
	stream := openSSE(t, s, sessionEventsSub, map[string]any{"id": id, "after": 0})
	assert.Equal(t, "next", nextSSE(t, stream).name)

	// A request whose body has not arrived yet is in flight.
	body, send := io.Pipe()
	req, err := http.NewRequest(http.MethodPost, s.URL+"/graphql", body)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	s.Authorize(req)
	answered := make(chan *http.Response, 1)
	go func() {
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			answered <- res
		}
		close(answered)
	}()
	_, err = send.Write([]byte(`{"query": "{ viewer `))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return s.RequestsInFlight() == 1 }, 10*time.Second, 5*time.Millisecond)

	stopped, stop := context.WithCancel(context.Background())
	stop()
	assert.ErrorIs(t, s.GoAway(stopped), context.Canceled, "GoAway waits while a request is in flight")

	_, err = send.Write([]byte(`{ role } }"}`))
	require.NoError(t, err)
	require.NoError(t, send.Close())
	res := <-answered
	require.NotNil(t, res)
	res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, s.GoAway(ctx), "nothing in flight any more")
	assert.JSONEq(t, goingAwayEvent, nextSSE(t, stream).data)
}
