package access

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/events"
	"sessiongraph/internal/store"
)

// revocation is the event a revocation of id commits.
func revocation(id uuid.UUID) *events.Event {
	return &events.Event{Sequence: 7, Kind: store.KindKeyRevoked, Payload: map[string]any{"keyID": id.String()}}
}

// ended waits for a held connection's end and returns its cause.
func ended(t *testing.T, held context.Context) error {
	t.Helper()
	select {
	case <-held.Done():
		return context.Cause(held)
	case <-time.After(5 * time.Second):
		t.Fatal("the connection was not ended")
		return nil
	}
}

func (f *keysFixture) principal(t *testing.T, key string) *Principal {
	t.Helper()
	p, err := f.Authenticate(context.Background(), key)
	require.NoError(t, err)
	return p
}

func TestARevocationEndsEveryConnectionItsKeyHolds(t *testing.T) {
	f := newKeysFixture(t)
	stream := f.subscribed(t)
	key, row := f.newKey(t)
	otherKey, _ := f.newKey(t)
	p, other := f.principal(t, key), f.principal(t, otherKey)
	before := f.statements.Load()
	socket, err := f.Hold(context.Background(), p)
	require.NoError(t, err)
	stream2, err := f.Hold(context.Background(), p)
	require.NoError(t, err)
	untouched, err := f.Hold(context.Background(), other)
	require.NoError(t, err)
	assert.Equal(t, before, f.statements.Load(), "the cache vouches for the keys it holds: no statement")
	assert.True(t, Held(socket))

	stream <- revocation(row.ID)
	assert.Equal(t, ErrKeyRevoked, ended(t, socket))
	assert.Equal(t, ErrKeyRevoked, ended(t, stream2))
	assert.NoError(t, untouched.Err(), "another key's connection goes on")
}

func TestTheReplicaThatRevokesEndsTheConnectionsAtOnce(t *testing.T) {
	f := newKeysFixture(t)
	f.subscribed(t) // its events never come
	key, row := f.newKey(t)
	held, err := f.Hold(context.Background(), f.principal(t, key))
	require.NoError(t, err)
	_, err = f.Revoke(System(context.Background()), row.ID)
	require.NoError(t, err)
	assert.Equal(t, ErrKeyRevoked, context.Cause(held), "ended before Revoke returned")
}

// A revocation heard between a connection's authentication and its hold
// refuses the hold: the database, not the cache, answers for an evicted key.
func TestAKeyRevokedSinceItAuthenticatedCannotBeHeld(t *testing.T) {
	f := newKeysFixture(t)
	stream := f.subscribed(t)
	key, row := f.newKey(t)
	p := f.principal(t, key)
	_, err := f.store.RevokeKey(System(context.Background()), row.ID)
	require.NoError(t, err)
	stream <- revocation(row.ID)
	require.Eventually(t, func() bool { return f.refused(t, key) }, 5*time.Second, time.Millisecond)

	held, err := f.Hold(context.Background(), p)
	assert.Equal(t, ErrKeyRevoked, err)
	assert.Nil(t, held)
	assert.Empty(t, f.holds.keys(), "nothing is left held")
}

// Revocations committed while the cache heard none (its subscription broke)
// end their connections once it has subscribed again.
func TestConnectionsOfKeysRevokedWhileTheStreamWasDownEndOnResubscribing(t *testing.T) {
	f := newKeysFixture(t)
	stream := f.subscribed(t)
	key, row := f.newKey(t)
	otherKey, _ := f.newKey(t)
	held, err := f.Hold(context.Background(), f.principal(t, key))
	require.NoError(t, err)
	untouched, err := f.Hold(context.Background(), f.principal(t, otherKey))
	require.NoError(t, err)

	close(stream)
	require.Eventually(t, func() bool { return !f.Caching() }, 5*time.Second, time.Millisecond)
	_, err = f.store.RevokeKey(System(context.Background()), row.ID) // its event is never delivered
	require.NoError(t, err)
	assert.NoError(t, held.Err(), "nothing heard yet")

	f.subscribed(t)
	assert.Equal(t, ErrKeyRevoked, ended(t, held))
	assert.NoError(t, untouched.Err())
}

// Before each operation a connection rechecks its key in the database, so
// a revocation this replica has not heard of yet already refuses it.
func TestRecheckFindsARevocationNotYetHeard(t *testing.T) {
	f := newKeysFixture(t)
	stream := f.subscribed(t)
	key, row := f.newKey(t)
	p := f.principal(t, key)
	held, err := f.Hold(context.Background(), p)
	require.NoError(t, err)
	before := f.statements.Load()
	require.NoError(t, f.Recheck(context.Background(), p.KeyID))
	assert.Equal(t, int64(1), f.statements.Load()-before, "one statement")

	_, err = f.store.RevokeKey(System(context.Background()), row.ID)
	require.NoError(t, err)
	assert.Equal(t, ErrKeyRevoked, f.Recheck(context.Background(), p.KeyID))
	assert.True(t, f.refused(t, key), "the cache forgot it")
	assert.NoError(t, held.Err(), "the connection stays to carry the refusal; the revocation's event ends it")
	stream <- revocation(row.ID)
	assert.Equal(t, ErrKeyRevoked, ended(t, held))
}

func TestAConnectionThatEndsIsForgotten(t *testing.T) {
	f := newKeysFixture(t)
	f.subscribed(t)
	key, _ := f.newKey(t)
	ctx, cancel := context.WithCancel(context.Background())
	_, err := f.Hold(ctx, f.principal(t, key))
	require.NoError(t, err)
	require.Len(t, f.holds.keys(), 1)
	cancel()
	require.Eventually(t, func() bool { return len(f.holds.keys()) == 0 }, 5*time.Second, time.Millisecond)
}
