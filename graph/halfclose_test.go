package graph_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// rawPost sends a GraphQL POST over a bare TCP connection and returns it,
// the request written whole.
func rawPost(t *testing.T, s *apitest.Server, query string, vars map[string]any) *net.TCPConn {
	t.Helper()
	u, err := url.Parse(s.URL)
	require.NoError(t, err)
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	require.NoError(t, err)
	c, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	require.NoError(t, c.SetDeadline(time.Now().Add(30*time.Second)))
	_, err = fmt.Fprintf(c, "POST /graphql HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s",
		u.Host, s.Key, len(body), body)
	require.NoError(t, err)
	return c.(*net.TCPConn)
}

// halfClosed posts, shuts the connection's write side (shutdown(SHUT_WR),
// as nc -N and some proxies do) and reads the answer.
func halfClosed(t *testing.T, s *apitest.Server, query string, vars map[string]any) (int, string) {
	t.Helper()
	c := rawPost(t, s, query, vars)
	require.NoError(t, c.CloseWrite())
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(b)
}

// A client that half-closes its connection after its request gets its
// normal answer, for a read and for a write: the request arrived whole.
func TestAHalfClosedClientGetsItsAnswer(t *testing.T) {
	s := apitest.New(t)
	status, body := halfClosed(t, s, `{ viewer { role } }`, nil)
	assert.Equal(t, http.StatusOK, status, body)
	assert.JSONEq(t, `{"data":{"viewer":{"role":"ADMIN"}}}`, body)

	status, body = halfClosed(t, s, openSession, map[string]any{"in": map[string]any{"tenant": "acme", "externalKey": "half-closed"}})
	require.Equal(t, http.StatusOK, status, body)
	var res struct {
		Data struct {
			OpenSession struct{ Session struct{ ID string } }
		}
		Errors []apitest.Error
	}
	require.NoError(t, json.Unmarshal([]byte(body), &res), body)
	require.Empty(t, res.Errors, body)
	id := res.Data.OpenSession.Session.ID
	require.NotEmpty(t, id)
	var read struct{ Session struct{ ID string } }
	s.MustDo(t, `query($id: ID!) { session(id: $id) { id } }`, map[string]any{"id": id}, &read)
	assert.Equal(t, id, read.Session.ID, "the half-closed client's session is in the database")
}

// A write whose client disconnects as soon as it has sent it is committed
// all the same: it arrived whole, and an agent runtime that crashed after
// sending endTurn must not lose the turn.
func TestAWriteIsCommittedWhenItsClientLeaves(t *testing.T) {
	s := apitest.New(t)
	id := open(t, s, map[string]any{"tenant": "acme", "externalKey": "leaver"}).OpenSession.Session.ID
	const n = 20
	for i := range n {
		c := rawPost(t, s, updateSession, map[string]any{"in": map[string]any{"id": id, "metadata": map[string]any{"left": fmt.Sprint(i)}}})
		require.NoError(t, c.Close()) // gone before the answer

	}
	// Every write commits, each with its event after the session's opening
	// (the writes may still be running when the clients are gone).
	var got struct {
		Session struct{ Events struct{ TotalCount int } }
	}
	assert.Eventually(t, func() bool {
		s.MustDo(t, `query($id: ID!) { session(id: $id) { events { totalCount } } }`, map[string]any{"id": id}, &got)
		return got.Session.Events.TotalCount >= 1+n
	}, 20*time.Second, 20*time.Millisecond, "every write whose client left is committed")
	assert.Equal(t, 1+n, got.Session.Events.TotalCount)
}

// The same over a WebSocket: a mutation whose subscribe message arrived
// commits even when its client closes the socket right after sending it.
func TestAMutationOverAWebSocketIsCommittedWhenItsSocketCloses(t *testing.T) {
	s := apitest.New(t)
	id := open(t, s, map[string]any{"tenant": "acme", "externalKey": "socket-leaver"}).OpenSession.Session.ID
	const n = 20
	for i := range n {
		ws := s.DialWS(t, nil)
		ws.Subscribe(updateSession, map[string]any{"in": map[string]any{"id": id, "metadata": map[string]any{"left": fmt.Sprint(i)}}})
		ws.Close() // gone before the answer
	}
	var got struct {
		Session struct{ Events struct{ TotalCount int } }
	}
	assert.Eventually(t, func() bool {
		s.MustDo(t, `query($id: ID!) { session(id: $id) { events { totalCount } } }`, map[string]any{"id": id}, &got)
		return got.Session.Events.TotalCount >= 1+n
	}, 20*time.Second, 20*time.Millisecond, "every mutation whose socket closed is committed")
	assert.Equal(t, 1+n, got.Session.Events.TotalCount)
}
