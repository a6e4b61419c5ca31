package graph_test

import (
	"context"
	"database/sql"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
	"sessiongraph/internal/config"
)

// slotsServer runs a server whose rate and in-flight limits never bind,
// with operations slots of which one key may take keyMost, and returns
// it with a flooding CLIENT key of tenant acme and a victim CLIENT key of
// tenant globex, each with a session of its own.
func slotsServer(t *testing.T, operations, keyMost int) (s, flood, victim *apitest.Server) {
	t.Helper()
	s = apitest.New(t, func(c *app.Config) {
		c.Fairness = config.Fairness{KeyRate: 1 << 20, KeyBurst: 1 << 20, KeyInFlight: 1 << 20, TenantRate: 1 << 20,
			TenantBurst: 1 << 20, TenantInFlight: 1 << 20, KeyPoolShare: 100, TenantPoolShare: 100,
			Operations: operations, KeyOperations: keyMost}
		c.MaxOpenConns = 16 // the pool never binds either: what is tested is the slots
		// A tenant counts as working only while it runs or waits: the
		// sessions opened first do not count.
		c.TenantLinger = 0
	})
	return s, s.WithKey(s.NewKey(t, "CLIENT", "acme")), s.WithKey(s.NewKey(t, "CLIENT", "globex"))
}

func slotKey(t *testing.T, s *apitest.Server) uuid.UUID {
	t.Helper()
	p, err := s.Keys.Authenticate(context.Background(), s.Key)
	require.NoError(t, err)
	return p.KeyID
}

func sessionOf(t *testing.T, s *apitest.Server, tenant, externalKey string) string {
	t.Helper()
	var opened struct {
		OpenSession struct{ Session struct{ ID string } }
	}
	s.MustDo(t, `mutation($t: String!, $k: String!) { openSession(input: {tenant: $t, externalKey: $k}) { session { id } } }`,
		map[string]any{"t": tenant, "k": externalKey}, &opened)
	return opened.OpenSession.Session.ID
}

// lockSession holds session id's row lock from a connection of its own,
// so that every write to the session waits in the database, holding its
// slot, as a slow operation does; unlock lets them go.
func lockSession(t *testing.T, dsn, id string) (unlock func()) {
	t.Helper()
	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	tx, err := db.BeginTx(context.Background(), nil)
	require.NoError(t, err)
	_, err = tx.Exec(`SELECT id FROM sessions WHERE id = $1 FOR UPDATE`, id)
	require.NoError(t, err)
	var once sync.Once
	unlock = func() { once.Do(func() { require.NoError(t, tx.Rollback()) }) }
	t.Cleanup(unlock)
	return unlock
}

const updateSummary = `mutation($id: ID!, $h: String!) { updateSession(input: {id: $id, historySummary: $h}) { session { historySummary } } }`

// answered sends a write of s in the background; its response arrives on
// the channel.
func answered(t *testing.T, wg *sync.WaitGroup, s *apitest.Server, id, summary string) <-chan *apitest.Response {
	out := make(chan *apitest.Response, 1)
	wg.Go(func() { out <- s.Do(t, updateSummary, map[string]any{"id": id, "h": summary}) })
	return out
}

// waitFor fails the test unless a response arrives: a guard against a
// hang, not a measure of time.
func waitFor(t *testing.T, c <-chan *apitest.Response, what string) *apitest.Response {
	t.Helper()
	select {
	case res := <-c:
		return res
	case <-time.After(30 * time.Second):
		require.FailNow(t, "no answer", what)
		return nil
	}
}

// One key flooding writes that hold every slot (each waits on a session
// lock) and six more waiting: another tenant's write, which came last,
// takes the first slot that frees, ahead of every operation the flood has
// waiting, and commits while the flood's operations still wait. Without
// the slots' order the freed slot went to the flood's oldest waiting
// write, which waits on the lock in turn, and the victim's write waited
// for the flood to end.
func TestAnotherTenantsWriteRunsAheadOfAFloodsWaitingOperations(t *testing.T) {
	s, flood, victim := slotsServer(t, 2, 2)
	floodKey, victimKey := slotKey(t, flood), slotKey(t, victim)
	first, second := sessionOf(t, flood, "acme", "first"), sessionOf(t, flood, "acme", "second")
	mine := sessionOf(t, victim, "globex", "mine")
	unlockFirst, unlockSecond := lockSession(t, s.DSN, first), lockSession(t, s.DSN, second)
	slots := s.Slots()

	var wg sync.WaitGroup
	defer wg.Wait()
	held := answered(t, &wg, flood, first, "held on the first lock")
	require.Eventually(t, func() bool { return slots.Running(floodKey) == 1 }, 20*time.Second, 5*time.Millisecond)
	var flooding []<-chan *apitest.Response
	for range 7 {
		flooding = append(flooding, answered(t, &wg, flood, second, "held on the second lock"))
	}
	require.Eventually(t, func() bool { return slots.Running(floodKey) == 2 && slots.Waiting(floodKey) == 6 }, 20*time.Second, 5*time.Millisecond,
		"the flood holds both slots and six of its writes wait")

	write := answered(t, &wg, victim, mine, "written under a flood")
	require.Eventually(t, func() bool { return slots.Waiting(victimKey) == 1 }, 20*time.Second, 5*time.Millisecond, "the victim's write waits for a slot")

	unlockFirst() // one of the flood's slots frees
	res := waitFor(t, write, "the victim's write")
	require.Empty(t, res.Errors)
	assert.JSONEq(t, `{"updateSession": {"session": {"historySummary": "written under a flood"}}}`, string(res.Data))
	assert.Empty(t, waitFor(t, held, "the first flood write").Errors)
	// Only now, the victim's write answered, does the flood's next write
	// take the slot back.
	require.Eventually(t, func() bool { return slots.Running(floodKey) == 2 && slots.Waiting(floodKey) == 5 }, 20*time.Second, 5*time.Millisecond)

	unlockSecond()
	for i, c := range flooding {
		assert.Empty(t, waitFor(t, c, "a flood write").Errors, "flood write %d commits once the lock is gone", i)
	}
	assert.Zero(t, slots.Running(floodKey)+slots.Waiting(floodKey), "every slot is given back")
}

// With the default sizes (two slots per core, a key all but one), a
// key never holds every slot: however long a flood's operations hold
// theirs (each waits on a session lock here), another tenant's writes run
// at once and commit, while the flood's others wait.
func TestAFloodingKeyLeavesAnotherTenantASlot(t *testing.T) {
	s, flood, victim := slotsServer(t, 0, 0)
	floodKey := slotKey(t, flood)
	locked, mine := sessionOf(t, flood, "acme", "locked"), sessionOf(t, victim, "globex", "mine")
	unlock := lockSession(t, s.DSN, locked)
	slots := s.Slots()

	var wg sync.WaitGroup
	defer wg.Wait()
	require.Less(t, slots.KeyMost, slots.Size)
	var flooding []<-chan *apitest.Response
	for range slots.KeyMost + 5 {
		flooding = append(flooding, answered(t, &wg, flood, locked, "held on the lock"))
	}
	require.Eventually(t, func() bool {
		return slots.Running(floodKey) == slots.KeyMost && slots.Waiting(floodKey) == 5
	}, 20*time.Second, 5*time.Millisecond, "the flood holds its most slots, the rest of its writes wait")

	for i := range 3 {
		res := waitFor(t, answered(t, &wg, victim, mine, "written under a flood"), "the victim's write")
		assert.Empty(t, res.Errors, "victim write %d commits while the flood holds its slots", i)
	}
	assert.Equal(t, 5, slots.Waiting(floodKey), "none of the flood's waiting writes went ahead")

	unlock()
	for i, c := range flooding {
		assert.Empty(t, waitFor(t, c, "a flood write").Errors, "flood write %d commits once the lock is gone", i)
	}
}

// A mutation sent over a WebSocket that waits for its slot is received
// whole: when its socket closes while it waits, it still runs once a slot
// frees, and commits.
func TestASocketsMutationWaitingForItsSlotCommitsAfterTheSocketCloses(t *testing.T) {
	s, flood, _ := slotsServer(t, 2, 2)
	floodKey := slotKey(t, flood)
	locked, other := sessionOf(t, flood, "acme", "locked"), sessionOf(t, flood, "acme", "other")
	unlock := lockSession(t, s.DSN, locked)
	slots := s.Slots()

	var wg sync.WaitGroup
	defer wg.Wait()
	held := []<-chan *apitest.Response{answered(t, &wg, flood, locked, "held"), answered(t, &wg, flood, locked, "held")}
	require.Eventually(t, func() bool { return slots.Running(floodKey) == 2 }, 20*time.Second, 5*time.Millisecond)

	ws := flood.DialWS(t, nil)
	ws.Subscribe(updateSummary, map[string]any{"id": other, "h": "sent before the socket closed"})
	require.Eventually(t, func() bool { return slots.Waiting(floodKey) == 1 }, 20*time.Second, 5*time.Millisecond, "the socket's mutation waits for a slot")
	ws.Close()

	unlock()
	for _, c := range held {
		assert.Empty(t, waitFor(t, c, "a held write").Errors)
	}
	var got struct {
		Node struct{ HistorySummary string }
	}
	require.Eventually(t, func() bool {
		flood.MustDo(t, `query($id: ID!) { node(id: $id) { ... on Session { historySummary } } }`, map[string]any{"id": other}, &got)
		return got.Node.HistorySummary == "sent before the socket closed"
	}, 20*time.Second, 10*time.Millisecond, "the mutation committed after its socket closed")
}
