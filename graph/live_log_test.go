package graph_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
)

// logRecorder keeps every record logged at level or above.
type logRecorder struct {
	level slog.Level
	mu    sync.Mutex
	lines []string
}

func (r *logRecorder) Enabled(_ context.Context, l slog.Level) bool { return l >= r.level }
func (r *logRecorder) WithAttrs([]slog.Attr) slog.Handler           { return r }
func (r *logRecorder) WithGroup(string) slog.Handler                { return r }

func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	line := rec.Level.String() + " " + rec.Message
	rec.Attrs(func(a slog.Attr) bool {
		line += " " + a.String()
		return true
	})
	r.mu.Lock()
	r.lines = append(r.lines, line)
	r.mu.Unlock()
	return nil
}

func (r *logRecorder) recorded() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.lines...)
}

// A client that completes a subscription, or leaves with it open, is not an
// error of the server's: 1,000 subscribe and complete cycles, half of them
// on sockets closed while the subscription starts, log no ERROR line.
func TestClientsLeavingSubscriptionsLogNoError(t *testing.T) {
	errs := &logRecorder{level: slog.LevelError}
	s := apitest.New(t, func(c *app.Config) { c.Logger = slog.New(errs) })
	id := open(t, s, map[string]any{"tenant": "acme", "externalKey": "leave"}).OpenSession.Session.ID
	ws := s.DialWS(t, nil)
	subscriptions := []string{
		sessionEventsSub,
		`subscription($id: ID!) { entityChanges(sessionID: $id) { ref } }`,
		`subscription($id: ID!) { contextUpdated(sessionID: $id, node: THINK) { tokenCount } }`,
	}
	for i := range 500 {
		sid := ws.Subscribe(subscriptions[i%len(subscriptions)], map[string]any{"id": id})
		ws.Send(apitest.Message{ID: sid, Type: "complete"})
		if i%100 == 0 {
			touch(t, s, id, i)
		}
	}
	ws.Close()
	for range 50 {
		left := s.DialWS(t, nil)
		for i := range 10 {
			left.Subscribe(subscriptions[i%len(subscriptions)], map[string]any{"id": id})
		}
		left.Close()
	}
	require.Eventually(t, func() bool { return s.ClientSubscriptions() == 0 }, 10*time.Second, 20*time.Millisecond)
	lines := errs.recorded()
	assert.Zero(t, len(lines), "ERROR lines, the first of them: %q", lines[:min(3, len(lines))])
}
