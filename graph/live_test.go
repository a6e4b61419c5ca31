package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/engine"
)

const sessionEventsSub = `subscription($id: ID!, $after: Int) { sessionEvents(sessionID: $id, after: $after) { sequence sessionID kind payload } }`

type liveEvent struct {
	Sequence  int64          `json:"sequence"`
	SessionID string         `json:"sessionID"`
	Tenant    string         `json:"tenant"`
	Kind      string         `json:"kind"`
	Payload   map[string]any `json:"payload"`
}

// nextEvent reads the next sessionEvents value of a subscription.
func nextEvent(t *testing.T, ws *apitest.WS, field string) liveEvent {
	t.Helper()
	m := ws.Read(20 * time.Second)
	require.Equal(t, "next", m.Type, "payload: %s", m.Payload)
	var res struct {
		Data   map[string]*liveEvent `json:"data"`
		Errors []apitest.Error       `json:"errors"`
	}
	require.NoError(t, json.Unmarshal(m.Payload, &res))
	require.Empty(t, res.Errors)
	require.NotNil(t, res.Data[field])
	return *res.Data[field]
}

func touch(t *testing.T, s *apitest.Server, id string, i int) {
	t.Helper()
	s.MustDo(t, updateSession, map[string]any{"in": map[string]any{"id": id, "metadata": map[string]any{"i": fmt.Sprint(i)}}}, nil)
}

func TestSessionEventsReplayThenGoLive(t *testing.T) {
	s := apitest.New(t)
	id := open(t, s, map[string]any{"tenant": "acme", "externalKey": "live"}).OpenSession.Session.ID
	other := open(t, s, map[string]any{"tenant": "acme", "externalKey": "other"}).OpenSession.Session.ID
	for i := range 3 {
		touch(t, s, id, i)
	}
	ws := s.DialWS(t, nil)
	ws.Subscribe(sessionEventsSub, map[string]any{"id": id, "after": 0})
	var seqs []int64
	kinds := []string{}
	for range 4 {
		ev := nextEvent(t, ws, "sessionEvents")
		seqs = append(seqs, ev.Sequence)
		kinds = append(kinds, ev.Kind)
		assert.Equal(t, id, ev.SessionID)
	}
	assert.Equal(t, []string{"session.opened", "session.updated", "session.updated", "session.updated"}, kinds, "the history first")
	touch(t, s, other, 9) // another session's event is not delivered
	for i := 3; i < 6; i++ {
		touch(t, s, id, i)
		ev := nextEvent(t, ws, "sessionEvents")
		assert.Equal(t, "session.updated", ev.Kind)
		assert.Equal(t, []any{"metadata"}, ev.Payload["fields"], "the payload names what changed")
		seqs = append(seqs, ev.Sequence)
	}
	for i := 1; i < len(seqs); i++ {
		assert.Greater(t, seqs[i], seqs[i-1], "in order")
	}

	// Resuming after the fourth event's sequence gives exactly the rest.
	ws2 := s.DialWS(t, nil)
	ws2.Subscribe(sessionEventsSub, map[string]any{"id": id, "after": seqs[3]})
	for _, want := range seqs[4:] {
		assert.Equal(t, want, nextEvent(t, ws2, "sessionEvents").Sequence)
	}

	// The audit trail is the same events, as a Relay connection.
	var trail struct {
		Session struct {
			Events struct {
				TotalCount int `json:"totalCount"`
				Edges      []struct {
					Node struct{ Sequence int64 } `json:"node"`
				} `json:"edges"`
			} `json:"events"`
		} `json:"session"`
	}
	s.MustDo(t, `query($id: ID!) { session(id: $id) { events(first: 100, orderBy: [{field: SEQUENCE}]) { totalCount edges { node { sequence } } } } }`, map[string]any{"id": id}, &trail)
	assert.Equal(t, 7, trail.Session.Events.TotalCount)
	for i, e := range trail.Session.Events.Edges {
		assert.Equal(t, seqs[i], e.Node.Sequence)
	}
}

func TestEntityChangesContextUpdatesAndTheAdminFeed(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "watch")
	a.turn("go")
	ws := s.DialWS(t, nil)
	ws.Subscribe(`subscription($id: ID!) { entityChanges(sessionID: $id, entityTypes: ["recipe"]) { sequence kind ref entityType action } }`, map[string]any{"id": a.id})
	feed := s.DialWS(t, nil)
	feed.Subscribe(`subscription { sessionsChanged { kind sessionID } }`, nil)
	ctxWS := s.DialWS(t, nil)
	ctxWS.Subscribe(`subscription($id: ID!) { contextUpdated(sessionID: $id, node: THINK) { tokenCount tiers { active } } }`, map[string]any{"id": a.id})
	first := ctxWS.Read(10 * time.Second)
	require.Equal(t, "next", first.Type)
	assert.Contains(t, string(first.Payload), `"tiers":{"active":[]}`, "a build at once, before any read")
	waitLive(t, s, 3) // each subscription is past its replay before the writes: none misses one

	a.read("meal_plans", map[string]any{"id": newUUID(), "date": "2026-01-12", "meal_type": "dinner", "recipe_id": newUUID()})
	m := ws.Read(10 * time.Second)
	require.Equal(t, "next", m.Type)
	var change struct {
		Data struct {
			EntityChanges engine.EntityChange `json:"entityChanges"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(m.Payload, &change))
	assert.Equal(t, "recipe_1", change.Data.EntityChanges.Ref, "only recipes: the meal plan is filtered out")
	assert.Equal(t, "linked", change.Data.EntityChanges.Action)
	assert.Equal(t, "refs.read", change.Data.EntityChanges.Kind)

	rebuilt := ctxWS.Read(10 * time.Second)
	require.Equal(t, "next", rebuilt.Type)
	assert.Contains(t, string(rebuilt.Payload), "meal_plan_1", "the build after the change shows the new ref")

	open(t, s, map[string]any{"tenant": "globex", "externalKey": "new"})
	var opened struct {
		Data struct {
			SessionsChanged struct{ Kind string } `json:"sessionsChanged"`
		} `json:"data"`
	}
	fm := feed.Read(10 * time.Second)
	require.NoError(t, json.Unmarshal(fm.Payload, &opened))
	assert.Equal(t, "session.opened", opened.Data.SessionsChanged.Kind, "registry writes are not in the admin feed")
}

// Two server processes on one PostgreSQL: a subscriber on replica A sees,
// in order and once each, every event of 1,000 mutations sent to replica B.
func TestEventsReachSubscribersOnAnotherReplica(t *testing.T) {
	a := apitest.New(t)
	b := apitest.Replica(t, a.DSN)
	id := open(t, b, map[string]any{"tenant": "acme", "externalKey": "replicas"}).OpenSession.Session.ID
	ws := a.DialWS(t, nil)
	ws.Subscribe(sessionEventsSub, map[string]any{"id": id})
	waitLive(t, a, 1) // the subscription is live before the writes start

	const mutations = 1000
	go func() {
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				for i := w; i < mutations; i += 4 {
					touch(t, b, id, i)
				}
			})
		}
		wg.Wait()
	}()
	var last int64
	for i := range mutations {
		ev := nextEvent(t, ws, "sessionEvents")
		require.Greater(t, ev.Sequence, last, "event %d out of order or repeated", i)
		last = ev.Sequence
	}
	total := a.Client.Event.Query().CountX(access.System(context.Background()))
	assert.Equal(t, mutations+1, total)
}

// Faults during a 4,000-event run: the listener's backend is terminated,
// then every backend of the database (what the server sees of a PostgreSQL
// restart), and the subscriber drops its connection twice and resumes with
// its last cursor. It ends with all 4,000 events, none twice. (10,000 took
// 73 s of a loaded make test and proved nothing 4,000 do not: each fault
// still comes with a writer running on both sides of it.)
func TestSubscriberResumesAcrossFaultsWithoutLosingAnEvent(t *testing.T) {
	s := apitest.New(t)
	ctx := access.System(context.Background())
	opened, err := s.Engine.Sessions.OpenSession(ctx, engine.OpenSessionInput{Tenant: "acme", ExternalKey: "faults"})
	require.NoError(t, err)
	id := opened.Session.ID
	const total = 4000

	writes := make(chan error, 1)
	go func() {
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for w := range 8 {
			wg.Go(func() {
				for i := w; i < total-1; i += 8 {
					for attempt := 0; ; attempt++ { // the database may be down for a moment
						_, err := s.Engine.Sessions.UpdateSession(ctx, engine.UpdateSessionInput{ID: id, HistorySummary: ptr(fmt.Sprint(i))})
						if err == nil {
							break
						}
						if attempt > 50 {
							errs <- err
							return
						}
						time.Sleep(50 * time.Millisecond) // a client's pause before its retry: the behaviour under test
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		writes <- <-errs
	}()

	seen := map[int64]bool{}
	var cursor int64
	resume := func() *apitest.WS {
		ws := s.DialWS(t, nil)
		ws.Subscribe(sessionEventsSub, map[string]any{"id": id.String(), "after": cursor})
		return ws
	}
	ws := resume()
	for len(seen) < total {
		switch len(seen) {
		case 800:
			_, err := s.DB.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'`)
			require.NoError(t, err)
		case 1600, 2800:
			ws.Close() // the client's connection drops; it resumes from its cursor
			ws = resume()
		case 2200:
			_, err := s.DB.Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)
			require.NoError(t, err)
		}
		m := ws.Read(30 * time.Second)
		if m.Type != "next" {
			ws.Close() // the stream ended (its replay failed while the database was away): resume
			ws = resume()
			continue
		}
		var res struct {
			Data struct {
				SessionEvents *liveEvent `json:"sessionEvents"`
			} `json:"data"`
		}
		require.NoError(t, json.Unmarshal(m.Payload, &res))
		if res.Data.SessionEvents == nil {
			ws.Close()
			ws = resume()
			continue
		}
		seq := res.Data.SessionEvents.Sequence
		require.False(t, seen[seq], "event %d delivered twice", seq)
		require.Greater(t, seq, cursor, "out of order")
		seen[seq] = true
		cursor = seq
	}
	require.NoError(t, <-writes)
	assert.Len(t, seen, total)
}

// 1,000 subscribe and unsubscribe cycles leave the goroutine count where it
// started.
func TestSubscriptionsDoNotLeak(t *testing.T) {
	s := apitest.New(t)
	id := open(t, s, map[string]any{"tenant": "acme", "externalKey": "leak"}).OpenSession.Session.ID
	ws := s.DialWS(t, nil)
	before := runtimeGoroutines()
	for i := range 1000 {
		sid := ws.Subscribe(sessionEventsSub, map[string]any{"id": id})
		ws.Send(apitest.Message{ID: sid, Type: "complete"})
		if i%100 == 0 {
			touch(t, s, id, i)
		}
	}
	ws.Close()
	after := runtimeGoroutines()
	assert.Eventually(t, func() bool { after = runtimeGoroutines(); return after <= before+5 }, 20*time.Second, 10*time.Millisecond)
	assert.LessOrEqual(t, after, before+5, "goroutines before %d, after %d", before, after)
	assert.Zero(t, s.ClientSubscriptions())
}

func ptr[T any](v T) *T { return &v }

// Options no build can use are refused when contextUpdated starts, with
// their code, rather than ending the stream later without a word.
func TestContextUpdatedRefusesOptionsItCannotBuildWith(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "watch-options")
	for _, options := range []map[string]any{{"tokenBudget": 12}, {"tokenizer": "no-such-tokenizer"}} {
		ws := s.DialWS(t, nil)
		ws.Subscribe(`subscription($id: ID!, $o: ContextOptions) { contextUpdated(sessionID: $id, node: THINK, options: $o) { tokenCount } }`,
			map[string]any{"id": a.id, "o": options})
		m := ws.Read(10 * time.Second)
		require.Contains(t, []string{"next", "error"}, m.Type, "options %v", options)
		assert.Contains(t, string(m.Payload), `"code":"BAD_USER_INPUT"`, "options %v: %s", options, m.Payload)
	}
}

// A subscription that could only wait in silence is refused when it starts:
// a cursor past the session's newest event, or an entity type its domain
// does not have.
func TestSubscriptionsRefuseWhatCouldNeverArrive(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "never")
	for _, c := range []struct{ query, code, says string }{
		{`subscription($id: ID!) { sessionEvents(sessionID: $id, after: 1000) { sequence } }`, "INVALID_CURSOR", "the session's newest event is 1"},
		{`subscription($id: ID!) { entityChanges(sessionID: $id, after: 1000) { sequence } }`, "INVALID_CURSOR", "the session's newest event is 1"},
		{`subscription($id: ID!) { entityChanges(sessionID: $id, entityTypes: ["recipe", "recipes"]) { sequence } }`, "UNKNOWN_ENTITY_TYPE", `has no entity type \"recipes\"`},
	} {
		ws := s.DialWS(t, nil)
		ws.Subscribe(c.query, map[string]any{"id": a.id})
		m := ws.Read(10 * time.Second)
		require.Contains(t, []string{"next", "error"}, m.Type, c.query)
		assert.Contains(t, string(m.Payload), `"code":"`+c.code+`"`, "%s: %s", c.query, m.Payload)
		assert.Contains(t, string(m.Payload), c.says, c.query)
	}
	// The newest event itself is a cursor to resume from.
	ws := s.DialWS(t, nil)
	ws.Subscribe(`subscription($id: ID!) { sessionEvents(sessionID: $id, after: 1) { sequence } }`, map[string]any{"id": a.id})
	a.turn("go on")
	m := ws.Read(10 * time.Second)
	require.Equal(t, "next", m.Type)
	assert.Contains(t, string(m.Payload), `"sequence":2`)
}

// waitLive waits until the server's hub has n subscriptions of clients past
// their replay (besides the API key cache's own, which follows
// revocations): a subscription from now misses nothing committed after that.
func waitLive(t *testing.T, s *apitest.Server, n int) {
	t.Helper()
	const keyCache = 1
	require.Eventually(t, func() bool { return s.Hub.Live() == keyCache+n }, 20*time.Second, 5*time.Millisecond,
		"want %d live subscriptions", n)
}
