package graph_test

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
	"sessiongraph/internal/config"
	"sessiongraph/internal/testdb"
)

const viewerRole = `{ viewer { role } }`

// A key over its request rate is answered 429 RATE_LIMITED with a
// Retry-After, before any work; another key of the same tenant shares the
// tenant's bucket, and a key of another tenant is not slowed at all. Over
// a WebSocket, the same key is refused at the same door.
func TestAKeyOverItsRateIsAnswered429WithRetryAfter(t *testing.T) {
	s := apitest.New(t, func(c *app.Config) {
		c.Fairness = config.Fairness{KeyRate: 1, KeyBurst: 3, KeyInFlight: 100, TenantRate: 1, TenantBurst: 5, TenantInFlight: 100,
			KeyPoolShare: 50, TenantPoolShare: 75}
	})
	flood := s.WithKey(s.NewKey(t, "READER", "acme"))
	for i := range 3 {
		res := flood.Do(t, viewerRole, nil)
		require.Empty(t, res.Errors, "request %d is within the burst", i)
	}
	res := flood.Do(t, viewerRole, nil)
	assert.Equal(t, 429, res.Status)
	require.Len(t, res.Errors, 1)
	assert.Equal(t, "RATE_LIMITED", res.Errors[0].Code())
	assert.Contains(t, res.Errors[0].Message, "-key-rate")
	retry, err := strconv.Atoi(res.Header.Get("Retry-After"))
	require.NoError(t, err, "Retry-After: %q", res.Header.Get("Retry-After"))
	assert.GreaterOrEqual(t, retry, 1)

	// Over a WebSocket the operation is refused at the same door as over
	// POST (graph/fairness.go), with a result that says it, then complete.
	ws := flood.DialWS(t, nil)
	id := ws.Subscribe(viewerRole, nil)
	m := ws.Read(10 * time.Second)
	assert.Equal(t, "next", m.Type)
	assert.Equal(t, id, m.ID)
	assert.Contains(t, string(m.Payload), `"code":"RATE_LIMITED"`)
	assert.Contains(t, string(m.Payload), `"retryAfter":`)
	assert.Equal(t, "complete", ws.Read(10*time.Second).Type)

	sameTenant := s.WithKey(s.NewKey(t, "READER", "acme"))
	// The tenant's burst of 5 has room for what the first key left.
	for range 3 {
		if res = sameTenant.Do(t, viewerRole, nil); res.Status != 200 {
			break
		}
	}
	assert.Equal(t, 429, res.Status)
	require.Len(t, res.Errors, 1)
	assert.Contains(t, res.Errors[0].Message, `tenant "acme"`)

	other := s.WithKey(s.NewKey(t, "CLIENT", "globex"))
	for range 3 {
		assert.Empty(t, other.Do(t, viewerRole, nil).Errors, "another tenant is not slowed")
	}
}

// A key that comes a little early for its tokens (its bucket refills in
// less than access.MaxRateWait) is not refused: five requests sent at once
// with a burst of one and 20 tokens a second (the last one 200 ms early)
// each wait for their token and are answered, so a client that sends as
// fast as it is answered is slowed to its key's rate instead of spinning
// on 429s. Before, four of the five were answered 429.
func TestAKeyJustOverItsRateWaitsForItsTokenInsteadOfA429(t *testing.T) {
	s := apitest.New(t, func(c *app.Config) {
		c.Fairness = config.Fairness{KeyRate: 20, KeyBurst: 1, KeyInFlight: 100, TenantRate: 1000, TenantBurst: 1000, TenantInFlight: 100,
			KeyPoolShare: 50, TenantPoolShare: 75}
	})
	key := s.WithKey(s.NewKey(t, "READER", "acme"))
	responses := make([]*apitest.Response, 5)
	var wg sync.WaitGroup
	for i := range responses {
		wg.Go(func() { responses[i] = key.Do(t, viewerRole, nil) })
	}
	wg.Wait()
	for i, res := range responses {
		assert.Equal(t, 200, res.Status, "request %d waits for its token", i)
		assert.Empty(t, res.Errors)
	}
}

// A key with its most requests in flight is answered 429 RATE_LIMITED for
// the next one, until one of them is answered; another key is admitted.
func TestAKeyWithItsMostRequestsInFlightIsAnswered429(t *testing.T) {
	s := apitest.New(t, func(c *app.Config) {
		c.Fairness = config.Fairness{KeyRate: 1000, KeyBurst: 1000, KeyInFlight: 2, TenantRate: 1000, TenantBurst: 1000, TenantInFlight: 100,
			KeyPoolShare: 100, TenantPoolShare: 100}
		c.MaxOpenConns = 8 // both searches reach the database
	})
	reader := s.WithKey(s.NewKey(t, "READER", "acme"))
	waiting, unlock := testdb.LockTable(t, s.DSN, "sessions")
	search := `{ sessions(first: 1, where: {externalKeyContainsFold: "x"}) { totalCount } }`
	var wg sync.WaitGroup
	held := make([]*apitest.Response, 2)
	for i := range held {
		wg.Go(func() { held[i] = reader.Do(t, search, nil) })
	}
	require.Eventually(t, func() bool { return waiting() == 2 }, 20*time.Second, 10*time.Millisecond, "both searches wait on the lock")

	res := reader.Do(t, search, nil)
	assert.Equal(t, 429, res.Status)
	require.Len(t, res.Errors, 1)
	assert.Equal(t, "RATE_LIMITED", res.Errors[0].Code())
	assert.Contains(t, res.Errors[0].Message, "-key-in-flight")
	assert.Equal(t, "1", res.Header.Get("Retry-After"))
	assert.Empty(t, s.WithKey(s.NewKey(t, "READER", "acme")).Do(t, viewerRole, nil).Errors, "another key is admitted")

	unlock()
	wg.Wait()
	for _, r := range held {
		assert.Empty(t, r.Errors, "the held searches finish once the lock is gone")
	}
	assert.Empty(t, reader.Do(t, search, nil).Errors, "and the key is admitted again")
}

// One READER key flooding slow searches holds no more than its share of
// the database pool: another tenant's write commits, and a key that was
// never used authenticates, while the searches wait. The searches are made
// slow by a lock on refs (which the write does not touch), so that each
// holds its connection as a 30 s search did; the pool has 4 connections,
// a key's share is half of it. Without shares the twelve searches took all
// four: the write timed out and the new key's check answered 503.
func TestAFloodingKeyLeavesOtherTenantsWritesAConnection(t *testing.T) {
	s := apitest.New(t, func(c *app.Config) {
		c.MaxOpenConns = 4
		c.RequestTimeout = 5 * time.Second
	})
	victim := s.WithKey(s.NewKey(t, "CLIENT", "globex"))
	var opened struct {
		OpenSession struct{ Session struct{ ID string } }
	}
	victim.MustDo(t, `mutation { openSession(input: {tenant: "globex", externalKey: "victim"}) { session { id } } }`, nil, &opened)
	flood := s.WithKey(s.NewKey(t, "READER", "acme"))
	waiting, unlock := testdb.LockTable(t, s.DSN, "refs")

	search := `{ sessions(first: 5, where: {hasRefsWith: [{labelContainsFold: "butter"}]}) { totalCount } }`
	var wg sync.WaitGroup
	searches := make([]*apitest.Response, 12)
	for i := range searches {
		wg.Go(func() { searches[i] = flood.Do(t, search, nil) })
	}
	require.Eventually(t, func() bool { return waiting() >= 1 }, 20*time.Second, 10*time.Millisecond, "the searches reach the lock")

	res := victim.Do(t, `mutation($id: ID!) { updateSession(input: {id: $id, historySummary: "written under a flood"}) { session { historySummary } } }`,
		map[string]any{"id": opened.OpenSession.Session.ID})
	require.Empty(t, res.Errors, "another tenant's write gets a connection")
	assert.JSONEq(t, `{"updateSession": {"session": {"historySummary": "written under a flood"}}}`, string(res.Data))

	fresh := s.WithKey(s.NewKey(t, "READER", "initech"))
	res = fresh.Do(t, viewerRole, nil)
	assert.Equal(t, 200, res.Status, "a key never seen before is checked: %v", res.Errors)
	assert.Empty(t, res.Errors)
	assert.LessOrEqual(t, waiting(), 2, "the flooding key holds at most its share (2 of 4) in the database")

	unlock()
	wg.Wait()
	for _, r := range searches {
		assert.Empty(t, r.Errors, "every search runs once the lock is gone")
	}
}

// A query past -query-timeout and a mutation past -mutation-timeout are
// cancelled with their statements and answered TIMEOUT; so is a statement
// PostgreSQL cancels for a statement_timeout an operator set (here in the
// database URL), which answered INTERNAL.
func TestAnOperationPastItsClassTimeoutAnswersTimeout(t *testing.T) {
	s := apitest.New(t, func(c *app.Config) {
		c.QueryTimeout = 300 * time.Millisecond
		c.MutationTimeout = 600 * time.Millisecond
	})
	var opened struct {
		OpenSession struct{ Session struct{ ID string } }
	}
	s.MustDo(t, `mutation { openSession(input: {tenant: "acme", externalKey: "slow"}) { session { id } } }`, nil, &opened)
	_, unlock := testdb.LockTable(t, s.DSN, "sessions")
	search := `{ sessions(first: 1, where: {externalKeyContainsFold: "slow"}) { totalCount } }`
	write := `mutation($id: ID!) { updateSession(input: {id: $id, historySummary: "late"}) { session { id } } }`
	assert.Equal(t, "TIMEOUT", s.ErrorCode(t, search, nil))
	assert.Equal(t, "TIMEOUT", s.ErrorCode(t, write, map[string]any{"id": opened.OpenSession.Session.ID}))
	unlock()

	sep := "?"
	if strings.Contains(s.DSN, "?") {
		sep = "&"
	}
	limited := apitest.Replica(t, s.DSN+sep+"statement_timeout=200")
	_, unlock = testdb.LockTable(t, s.DSN, "sessions")
	defer unlock()
	assert.Equal(t, "TIMEOUT", limited.ErrorCode(t, search, nil))
}
