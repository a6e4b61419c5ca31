package graph_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

const (
	revokeKey = `mutation($id: ID!) { revokeAPIKey(input: {id: $id}) { apiKey { id } } }`
	// revokedReason is the close reason of a socket whose key was revoked.
	revokedReason = "Forbidden: this API key was revoked while the connection was open; reconnect with a valid key"
)

// sseEvent is one event of a graphql-sse stream; ended is set for the end
// of the stream instead.
type sseEvent struct {
	name, data string
	ended      bool
}

// openSSE subscribes over SSE (graphql-sse, distinct connections) and
// returns the stream's events as they come.
func openSSE(t *testing.T, s *apitest.Server, query string, vars map[string]any) <-chan sseEvent {
	t.Helper()
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, s.URL+"/graphql", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	s.Authorize(req)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode)
	t.Cleanup(func() { res.Body.Close() })
	out := make(chan sseEvent, 16)
	go func() {
		lines := bufio.NewScanner(res.Body)
		var ev sseEvent
		for lines.Scan() {
			line := lines.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			case line == "" && ev.name != "":
				out <- ev
				ev = sseEvent{}
			}
		}
		out <- sseEvent{ended: true}
	}()
	return out
}

func nextSSE(t *testing.T, events <-chan sseEvent) sseEvent {
	t.Helper()
	select {
	case ev := <-events:
		return ev
	case <-time.After(20 * time.Second):
		t.Fatal("no SSE event within 20s")
		return sseEvent{}
	}
}

// closedWith reads a socket until it closes, and returns the close frame
// and the messages that came for the operation id first.
func closedWith(t *testing.T, ws *apitest.WS, id string) (websocket.CloseError, []apitest.Message) {
	t.Helper()
	var answers []apitest.Message
	for {
		m, err := ws.TryRead(20 * time.Second)
		if err != nil {
			var ce websocket.CloseError
			require.True(t, errors.As(err, &ce), "the socket ended without a close frame: %v", err)
			return ce, answers
		}
		if m.ID == id {
			answers = append(answers, m)
		}
	}
}

// Two server processes on one database: a key's WebSockets and SSE stream
// on replica A end when the key is revoked through replica B, and a query
// sent on the socket right after the revocation is refused, never answered.
func TestRevokingAKeyEndsItsConnectionsOnAnotherReplica(t *testing.T) {
	a := apitest.New(t)
	b := apitest.ReplicaProcess(t, a)
	client := a.WithKey(a.NewKey(t, "CLIENT", "acme"))
	id := open(t, client, map[string]any{"tenant": "acme", "externalKey": "revoked"}).OpenSession.Session.ID

	live := client.DialWS(t, nil)
	live.Subscribe(sessionEventsSub, map[string]any{"id": id})
	idle := client.DialWS(t, nil) // acknowledged, and nothing since
	stream := openSSE(t, client, sessionEventsSub, map[string]any{"id": id})
	// Past their replay, not only registered: a subscription from now reads
	// where now is after it registers, and would miss a write before that.
	waitLive(t, a, 2)
	touch(t, client, id, 1)
	assert.Equal(t, "session.updated", nextEvent(t, live, "sessionEvents").Kind)
	assert.Equal(t, "next", nextSSE(t, stream).name)

	b.MustDo(t, revokeKey, map[string]any{"id": keyID(t, b, "CLIENT")}, nil)
	query := live.Subscribe(`{ viewer { name } }`, nil)

	closed, answers := closedWith(t, live, query)
	assert.Equal(t, websocket.StatusCode(4403), closed.Code)
	assert.Equal(t, revokedReason, closed.Reason)
	// The query met the revocation in the database, or the socket closed
	// before it ran: either way it got no data.
	if len(answers) > 0 {
		require.Equal(t, "next", answers[0].Type, "payload: %s", answers[0].Payload)
		assert.JSONEq(t, `{"data":null,"errors":[{"message":"this API key was revoked while the connection was open; reconnect with a valid key","extensions":{"code":"UNAUTHENTICATED"}}]}`,
			string(answers[0].Payload))
	}
	idleClosed, _ := closedWith(t, idle, "")
	assert.Equal(t, websocket.StatusCode(4403), idleClosed.Code)
	assert.Equal(t, revokedReason, idleClosed.Reason)

	last := nextSSE(t, stream)
	assert.Equal(t, "next", last.name)
	assert.JSONEq(t, `{"data":null,"errors":[{"message":"this API key was revoked while the connection was open; reconnect with a valid key","extensions":{"code":"UNAUTHENTICATED"}}]}`, last.data)
	assert.Equal(t, "complete", nextSSE(t, stream).name)
	assert.True(t, nextSSE(t, stream).ended)
	require.Eventually(t, func() bool { return a.ClientSubscriptions() == 0 }, 10*time.Second, 10*time.Millisecond)
}
