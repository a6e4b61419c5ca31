package graph_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/events"
)

// stalledClient is an SSE client that stops reading: once the first event
// has been written, every further write blocks until resume, as a socket
// whose reader has stalled does once its buffers are full.
type stalledClient struct {
	header http.Header
	mu     sync.Mutex
	out    bytes.Buffer
	first  chan struct{} // closed once the first event is written
	resume chan struct{}
	once   sync.Once
}

func (c *stalledClient) Header() http.Header { return c.header }
func (c *stalledClient) WriteHeader(int)     {}
func (c *stalledClient) Flush()              {}

func (c *stalledClient) Write(b []byte) (int, error) {
	c.mu.Lock()
	started := strings.Contains(c.out.String(), "event: next")
	c.mu.Unlock()
	if started {
		<-c.resume
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := c.out.Write(b)
	if strings.Contains(c.out.String(), "event: next") {
		c.once.Do(func() { close(c.first) })
	}
	return n, err
}

// TestSlowSSESubscriberIsTold: over SSE too, a subscriber that falls more
// than the buffer behind gets a null value whose error says why
// (SUBSCRIBER_TOO_SLOW), then the stream ends.
func TestSlowSSESubscriberIsTold(t *testing.T) {
	s := apitest.New(t)
	id := open(t, s, map[string]any{"tenant": "acme", "externalKey": "sse-slow"}).OpenSession.Session.ID

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	body := `{"query":"subscription($id: ID!) { sessionEvents(sessionID: $id, after: 0) { sequence kind } }","variables":{"id":"` + id + `"}}`
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/graphql", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	s.Authorize(req)
	client := &stalledClient{header: http.Header{}, first: make(chan struct{}), resume: make(chan struct{})}
	served := make(chan struct{})
	go func() {
		defer close(served)
		s.Handler().ServeHTTP(client, req)
	}()

	select {
	case <-client.first:
	case <-time.After(time.Minute):
		t.Fatal("the replayed event was never written")
	}
	for i := range events.BufferSize + 10 {
		touch(t, s, id, i)
	}
	// The hub drops a subscriber that is BufferSize events behind; give it
	// the time to see the last write, then let the client read again.
	require.Eventually(t, func() bool { return s.ClientSubscriptions() == 0 }, time.Minute, 20*time.Millisecond)
	close(client.resume)
	select {
	case <-served:
	case <-time.After(time.Minute):
		t.Fatal("the stream did not end")
	}

	client.mu.Lock()
	out := client.out.String()
	client.mu.Unlock()
	assert.Contains(t, out, `"SUBSCRIBER_TOO_SLOW"`, "the client is told why: %s", out[max(0, len(out)-600):])
	assert.Contains(t, out, "event: complete")
}
