package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/devdb"
	"sessiongraph/internal/engine"
	"sessiongraph/internal/testdb"
	"sessiongraph/migrations"
)

// PostgreSQL restarts in the middle of a run: the writes pause and retry,
// the listener reconnects, and a subscriber that resumes with its last
// cursor whenever its stream ends still receives every event once, in order.
// The server reaches the database over a Unix socket, and over TCP through
// a proxy to it, whose connections the restart ends likewise.
func TestSubscriberSurvivesAPostgresRestart(t *testing.T) {
	for _, transport := range testdb.Transports {
		t.Run(string(transport), func(t *testing.T) { subscriberSurvivesAPostgresRestart(t, transport) })
	}
}

func subscriberSurvivesAPostgresRestart(t *testing.T, transport testdb.Transport) {
	ctx := context.Background()
	cluster, err := devdb.Ensure(ctx, devdb.Options{DataDir: t.TempDir() + "/pg", Database: "restart"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cluster.Stop(context.Background()) })
	require.NoError(t, migrations.Apply(ctx, cluster.DSN))
	dsn := cluster.DSN // the private cluster's socket
	if transport == testdb.TCP {
		dsn = testdb.NewProxy(t, dsn, transport).DSN
	}
	s := apitest.Replica(t, dsn)
	ctx = access.System(ctx) // the writes below go to the engine directly

	opened, err := s.Engine.Sessions.OpenSession(ctx, engine.OpenSessionInput{Tenant: "acme", ExternalKey: "restart"})
	require.NoError(t, err)
	id := opened.Session.ID
	const total = 600
	writes := make(chan error, 1)
	go func() {
		for i := 1; i < total; i++ {
			var err error
			for attempt := 0; attempt < 200; attempt++ { // the database may be restarting
				if _, err = s.Engine.Sessions.UpdateSession(ctx, engine.UpdateSessionInput{ID: id, HistorySummary: ptr(fmt.Sprint(i))}); err == nil {
					break
				}
				time.Sleep(50 * time.Millisecond) // a client's pause before its retry: the behaviour under test
			}
			if err != nil {
				writes <- err
				return
			}
		}
		writes <- nil
	}()

	var cursor int64
	seen := map[int64]bool{}
	resume := func() *apitest.WS {
		for attempt := 0; ; attempt++ {
			ws, err := s.TryDialWS(map[string]any{"id": id.String(), "after": cursor})
			if err == nil {
				return ws
			}
			require.Less(t, attempt, 100, "could not resubscribe: %v", err)
			time.Sleep(100 * time.Millisecond) // a client's pause before it resubscribes: the behaviour under test
		}
	}
	ws := resume()
	restarted := false
	for len(seen) < total {
		if len(seen) == total/3 && !restarted {
			require.NoError(t, cluster.Restart(ctx))
			restarted = true
		}
		m, err := ws.TryRead(30 * time.Second)
		require.NoError(t, err)
		var res struct {
			Data struct {
				SessionEvents *liveEvent `json:"sessionEvents"`
			} `json:"data"`
		}
		if m.Type == "next" {
			require.NoError(t, json.Unmarshal(m.Payload, &res))
		}
		if m.Type != "next" || res.Data.SessionEvents == nil {
			ws.Close() // the stream ended (its replay failed while the database was away): resume
			ws = resume()
			continue
		}
		seq := res.Data.SessionEvents.Sequence
		require.False(t, seen[seq], "event %d delivered twice", seq)
		require.Greater(t, seq, cursor)
		seen[seq] = true
		cursor = seq
	}
	require.NoError(t, <-writes)
	assert.True(t, restarted)
	assert.Len(t, seen, total)
}
