package access

import (
	"context"
	"database/sql"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/google/uuid"
	_ "github.com/jackc/pgx/v5/stdlib" // the pool's driver, as the server uses
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent"
	"sessiongraph/ent/apikey"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/dbhook"
	"sessiongraph/internal/events"
	"sessiongraph/internal/store"
	"sessiongraph/internal/testdb"
	"sessiongraph/migrations"
)

// keysFixture is a Keys on a fresh database whose revocation streams the
// test feeds by hand, standing in for the hub.
type keysFixture struct {
	*Keys
	client     *ent.Client
	statements *atomic.Int64
	streams    chan chan *events.Event
}

func newKeysFixture(t *testing.T) *keysFixture {
	t.Helper()
	db, err := sql.Open("pgx", testdb.New(t, migrations.Apply, migrations.Fingerprint()))
	require.NoError(t, err)
	f := &keysFixture{statements: new(atomic.Int64), streams: make(chan chan *events.Event, 4)}
	// Every round trip counts (raw statements and transactions included), so
	// "no statement" means none on any path.
	counted := dbhook.Wrap(entsql.OpenDB(dialect.Postgres, db), func(ctx context.Context, _ dbhook.Kind, _ string, run func(context.Context) error) error {
		f.statements.Add(1)
		return run(ctx)
	})
	f.client = ent.NewClient(ent.Driver(counted))
	t.Cleanup(func() { f.client.Close() })
	subscribe := func(ctx context.Context, filter events.Filter, _ events.Cursor) *events.Stream {
		assert.Equal(t, &store.SystemSession, filter.SessionID, "revocations are the system session's events")
		ch := make(chan *events.Event, events.BufferSize)
		f.streams <- ch
		// Like the hub, end the stream when the subscriber leaves, unless
		// the test broke it first.
		out := make(chan *events.Event)
		go func() {
			defer close(out)
			for {
				select {
				case ev, ok := <-ch:
					if !ok {
						return
					}
					select {
					case out <- ev:
					case <-ctx.Done():
						return
					}
				case <-ctx.Done():
					return
				}
			}
		}()
		return &events.Stream{C: out}
	}
	f.Keys = NewKeys(f.client, store.New(f.client, db), subscribe, slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return f
}

// subscribed waits for the next subscription and for Keys to cache again.
func (f *keysFixture) subscribed(t *testing.T) chan *events.Event {
	t.Helper()
	var ch chan *events.Event
	select {
	case ch = <-f.streams:
	case <-time.After(10 * time.Second):
		t.Fatal("Keys did not subscribe")
	}
	require.Eventually(t, f.Caching, 5*time.Second, time.Millisecond)
	return ch
}

func (f *keysFixture) newKey(t *testing.T) (string, *ent.APIKey) {
	t.Helper()
	key, row, err := CreateKey(context.Background(), f.client.APIKey, NewKey{Name: "runtime", Role: apikey.RoleClient, Tenant: "acme"})
	require.NoError(t, err)
	return key, row
}

// cost authenticates key and returns the statements it took.
func (f *keysFixture) cost(t *testing.T, key string) int64 {
	t.Helper()
	before := f.statements.Load()
	p, err := f.Authenticate(context.Background(), key)
	require.NoError(t, err)
	assert.Equal(t, "acme", p.Tenant)
	return f.statements.Load() - before
}

func (f *keysFixture) refused(t *testing.T, key string) bool {
	t.Helper()
	_, err := f.Authenticate(context.Background(), key)
	return apperr.CodeOf(err) == apperr.Unauthenticated
}

func TestKeysServeFromMemoryOnlyWhileSubscribedToRevocations(t *testing.T) {
	f := newKeysFixture(t)
	stream := f.subscribed(t)
	key, row := f.newKey(t)

	assert.Equal(t, int64(2), f.cost(t, key), "the lookup and the first lastUsedAt")
	assert.Equal(t, int64(0), f.cost(t, key), "a repeat request costs nothing")

	close(stream) // the subscription broke: the cache is off and empty
	require.Eventually(t, func() bool { return !f.Caching() }, 5*time.Second, time.Millisecond)
	assert.Equal(t, int64(1), f.cost(t, key), "looked up again")
	assert.Equal(t, int64(1), f.cost(t, key), "and again, while not subscribed")

	stream = f.subscribed(t)
	assert.Equal(t, int64(1), f.cost(t, key), "the first request after resubscribing looks up")
	assert.Equal(t, int64(0), f.cost(t, key))

	stream <- &events.Event{Sequence: 7, Kind: store.KindKeyRevoked, Payload: map[string]any{"keyID": row.ID.String()}}
	require.Eventually(t, func() bool { return f.cost(t, key) == 1 }, 5*time.Second, time.Millisecond,
		"a revocation event evicts the key")
}

func TestARevokedKeyIsRefusedAtOnceByTheReplicaThatRevokedIt(t *testing.T) {
	f := newKeysFixture(t)
	f.subscribed(t) // its events never come: eviction here does not wait for them
	key, row := f.newKey(t)
	f.cost(t, key)
	require.Equal(t, int64(0), f.cost(t, key))

	revoked, err := f.Revoke(System(context.Background()), row.ID)
	require.NoError(t, err)
	assert.NotNil(t, revoked.RevokedAt)
	assert.True(t, f.refused(t, key))
}

func TestTheLastUsedTouchFindsARevocationTheStreamMissed(t *testing.T) {
	f := newKeysFixture(t)
	f.subscribed(t)
	key, row := f.newKey(t)
	f.cost(t, key)
	// Revoked behind Keys' back (as if the hub had stopped reading events),
	// and a minute later.
	_, err := f.store.RevokeKey(System(context.Background()), row.ID)
	require.NoError(t, err)
	assert.False(t, f.refused(t, key), "served from memory within the minute")
	f.mu.Lock()
	f.byHash[hashKey(key)].touched = time.Now().Add(-2 * touchEvery)
	f.mu.Unlock()
	assert.True(t, f.refused(t, key))
}

func TestALookupThatOverlappedARevocationIsNotCached(t *testing.T) {
	f := newKeysFixture(t)
	f.subscribed(t)
	key, _ := f.newKey(t)
	f.cost(t, key) // touched, so that lookups below cost one statement
	f.setLive(true)
	f.mu.Lock()
	gen := f.gen
	f.mu.Unlock()
	f.evict(uuid.New()) // a revocation arrives while the lookup runs
	_, err := f.lookup(context.Background(), hashKey(key), gen)
	require.NoError(t, err)
	assert.Equal(t, int64(1), f.cost(t, key), "not cached")
	assert.Equal(t, int64(0), f.cost(t, key))
}
