package graph_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/events"
)

// Before the socket's send buffer was bounded, the kernel grew it to 4 MB
// here (net.ipv4.tcp_wmem) and a client that stopped reading was cut off only
// after some 18,000 unread sessionEvents values of ~150 bytes (2.7 MB); now ~1,200.
// Over SSE, with events of ~1 KB, it took more than 2,000 (2 MB); now ~350.
const (
	maxUnreadEvents    = 4000
	maxUnreadSSEEvents = 2000
	maxUnreadBytes     = 1 << 20
)

// A WebSocket subscriber that stops reading, over a real loopback TCP
// connection with the kernel's default buffers, is cut off once the server
// holds a bounded amount for it (the relay's BufferSize events, a 32 KiB
// socket send buffer and what the client's kernel takes), not once the
// kernel has absorbed megabytes; when it
// reads again it finds every event it was given, in order, then a null value
// whose error says SUBSCRIBER_TOO_SLOW, then complete.
func TestSubscriberThatStopsReadingOverTCPIsTold(t *testing.T) {
	s := apitest.New(t)
	id := open(t, s, map[string]any{"tenant": "acme", "externalKey": "stops-reading"}).OpenSession.Session.ID
	ws := s.DialWS(t, nil) // httptest: a real TCP connection on 127.0.0.1
	ws.Subscribe(sessionEventsSub, map[string]any{"id": id, "after": 0})
	first := nextEvent(t, ws, "sessionEvents")
	require.Equal(t, int64(1), first.Sequence)

	// From here the client reads nothing.
	deadline := time.Now().Add(3 * time.Minute)
	written := 0
	for s.ClientSubscriptions() > 0 {
		require.Less(t, written, maxUnreadEvents, "a subscriber that reads nothing is still served after %d events", written)
		require.True(t, time.Now().Before(deadline), "a subscriber that reads nothing is still served after %d events", written)
		touch(t, s, id, written)
		written++
	}
	t.Logf("cut off after %d unread events", written)

	cursor := first.Sequence
	unread := 0
	for {
		m := ws.Read(30 * time.Second)
		unread += len(m.Payload)
		if m.Type == "complete" {
			t.Fatalf("completed without telling why after event %d", cursor)
		}
		require.Equal(t, "next", m.Type, "payload: %s", m.Payload)
		var res struct {
			Data   map[string]*liveEvent `json:"data"`
			Errors []apitest.Error       `json:"errors"`
		}
		require.NoError(t, json.Unmarshal(m.Payload, &res))
		if len(res.Errors) > 0 {
			require.Nil(t, res.Data["sessionEvents"])
			assert.Equal(t, "SUBSCRIBER_TOO_SLOW", res.Errors[0].Code())
			break
		}
		require.Equal(t, cursor+1, res.Data["sessionEvents"].Sequence, "in order, none skipped")
		cursor++
	}
	t.Logf("%d bytes waited for the client", unread)
	assert.Less(t, unread, maxUnreadBytes, "what the server and the kernels held for the client")
	assert.Equal(t, "complete", ws.Read(30*time.Second).Type)
	assert.GreaterOrEqual(t, int(cursor-first.Sequence), events.BufferSize, "it was given at least its buffer")
}

// Over SSE too: a client that stops reading a real loopback stream with
// default socket buffers is cut off after a bounded amount, and on reading
// again finds its events in order, then SUBSCRIBER_TOO_SLOW, then complete.
func TestSSESubscriberThatStopsReadingOverTCPIsTold(t *testing.T) {
	s := apitest.New(t)
	id := open(t, s, map[string]any{"tenant": "acme", "externalKey": "sse-stops-reading"}).OpenSession.Session.ID
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// Aliases make each event ~1 KB, so that a few hundred fill the buffers.
	var wide strings.Builder
	for i := range 20 {
		fmt.Fprintf(&wide, " s%d: sessionID", i)
	}
	body := `{"query":"subscription($id: ID!) { sessionEvents(sessionID: $id, after: 0) { sequence kind` + wide.String() + ` } }","variables":{"id":"` + id + `"}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/graphql", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	s.Authorize(req)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	// A small reader: what it reads ahead is what the client has taken.
	stream := bufio.NewReaderSize(res.Body, 256)
	for { // past the stream's opening comment, to its first event
		line, err := stream.ReadString('\n')
		require.NoError(t, err)
		if line == "event: next\n" {
			break
		}
	}

	// From here the client reads nothing.
	written := 0
	for s.ClientSubscriptions() > 0 {
		require.Less(t, written, maxUnreadSSEEvents, "an SSE subscriber that reads nothing is still served after %d events", written)
		require.NoError(t, ctx.Err(), "an SSE subscriber that reads nothing is still served after %d events", written)
		touch(t, s, id, written)
		written++
	}
	t.Logf("cut off after %d unread events", written)

	var sequence int64 = 0
	unread := 0
	for {
		line, err := stream.ReadString('\n')
		require.NoError(t, err, "the stream ended without complete after event %d", sequence)
		unread += len(line)
		data, ok := strings.CutPrefix(line, "data: ")
		if line == "event: complete\n" {
			t.Fatalf("completed without telling why after event %d", sequence)
		}
		if !ok {
			continue
		}
		var resp struct {
			Data struct {
				SessionEvents *struct{ Sequence int64 } `json:"sessionEvents"`
			} `json:"data"`
			Errors []apitest.Error `json:"errors"`
		}
		require.NoError(t, json.Unmarshal([]byte(data), &resp))
		if len(resp.Errors) > 0 {
			assert.Equal(t, "SUBSCRIBER_TOO_SLOW", resp.Errors[0].Code())
			break
		}
		if sequence == 0 {
			sequence = resp.Data.SessionEvents.Sequence
			continue
		}
		require.Equal(t, sequence+1, resp.Data.SessionEvents.Sequence, "in order, none skipped")
		sequence++
	}
	t.Logf("%d bytes waited for the client", unread)
	assert.Less(t, unread, maxUnreadBytes, "what the server and the kernels held for the client")
	rest, err := io.ReadAll(stream)
	require.NoError(t, err)
	assert.Contains(t, string(rest), "event: complete\n")
}
