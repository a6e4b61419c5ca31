package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent"
	"sessiongraph/ent/session"
	"sessiongraph/internal/store"
)

// Sessions have no unique index on their key (so that they distribute by
// id); session_keys keeps get-or-create exact. Twenty openers of a key whose
// session's TTL has just run out: the old session expires once, one new
// session takes the key, and every opener gets that one.
func TestConcurrentOpensAfterTheTTLRanOutMakeOneSuccessor(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	clock := time.Now()
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	st, client, _ := newStore(t, store.Clock(now))
	fill := func(c *ent.SessionCreate) { c.SetDomain("kitchen").SetTTLSeconds(60) }

	first, err := st.Open(ctx, "acme", "conv", fill)
	require.NoError(t, err)
	require.True(t, first.Created)
	mu.Lock()
	clock = clock.Add(2 * time.Minute)
	mu.Unlock()

	const openers = 20
	got := make([]store.Opened, openers)
	var wg sync.WaitGroup
	for i := range openers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o, err := st.Open(ctx, "acme", "conv", fill)
			assert.NoError(t, err)
			got[i] = o
		}()
	}
	wg.Wait()

	created := 0
	for _, o := range got {
		require.NotNil(t, o.Session)
		assert.Equal(t, got[0].Session.ID, o.Session.ID, "every opener gets the same session")
		assert.NotEqual(t, first.Session.ID, o.Session.ID)
		if o.Created {
			created++
			require.NotNil(t, o.Replaced)
			assert.Equal(t, first.Session.ID, *o.Replaced)
		}
	}
	assert.Equal(t, 1, created)
	live := client.Session.Query().Where(session.Tenant("acme"), session.ExternalKey("conv"),
		session.StatusEQ(session.StatusActive)).AllX(ctx)
	require.Len(t, live, 1)
	assert.Equal(t, got[0].Session.ID, live[0].ID)
	old := client.Session.GetX(ctx, first.Session.ID)
	assert.Equal(t, session.StatusExpired, old.Status)
	assert.Equal(t, int64(2), old.EventSequence, "opened, then expired once")
	key := client.SessionKey.GetX(ctx, store.KeyID("acme", "conv"))
	assert.Equal(t, live[0].ID, key.SessionID)
}

// A key's id is a function of the pair, so no two pairs share one even when
// their concatenations do.
func TestKeyIDSeparatesTenantFromKey(t *testing.T) {
	assert.NotEqual(t, store.KeyID("ab", "c"), store.KeyID("a", "bc"))
	assert.Equal(t, store.KeyID("acme", "conv"), store.KeyID("acme", "conv"))
	assert.NotEqual(t, uuid.Nil, store.KeyID("", ""))
}

// Deleting a key's last session takes the key with it: the next open
// starts afresh and names nothing, and an opener is never handed a deleted
// session.
func TestDeletingAKeysSessionFreesTheKey(t *testing.T) {
	ctx := context.Background()
	st, client, _ := newStore(t)
	first := openOne(t, st, "conv")
	_, err := st.ExpireWhere(ctx, "admin", session.ID(first.ID))
	require.NoError(t, err)
	second, err := st.Open(ctx, "acme", "conv", func(c *ent.SessionCreate) { c.SetDomain("kitchen").SetTTLSeconds(3600) })
	require.NoError(t, err)
	require.True(t, second.Created)
	require.NotNil(t, second.Replaced)
	assert.Equal(t, first.ID, *second.Replaced, "the key's last session, expired by an admin")

	deleted, err := st.DeleteWhere(ctx, "admin", session.ID(second.Session.ID))
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{second.Session.ID}, deleted)
	assert.Zero(t, client.SessionKey.Query().CountX(ctx), "the key named the deleted session")

	third, err := st.Open(ctx, "acme", "conv", func(c *ent.SessionCreate) { c.SetDomain("kitchen").SetTTLSeconds(3600) })
	require.NoError(t, err)
	assert.True(t, third.Created)
	assert.Nil(t, third.Replaced)
	assert.Equal(t, third.Session.ID, client.SessionKey.GetX(ctx, store.KeyID("acme", "conv")).SessionID)

	// Deleting the expired first session leaves the key alone: it names
	// the live one.
	_, err = st.DeleteWhere(ctx, "retention", session.ID(first.ID))
	require.NoError(t, err)
	assert.Equal(t, third.Session.ID, client.SessionKey.GetX(ctx, store.KeyID("acme", "conv")).SessionID)
}

// Openers, expiries and deletions of one key at once: none fails (no
// deadlock, no key found missing), and the key never has two live sessions.
func TestOpensExpiriesAndDeletionsOfOneKeyAtOnce(t *testing.T) {
	ctx := context.Background()
	st, client, _ := newStore(t)
	fill := func(c *ent.SessionCreate) { c.SetDomain("kitchen").SetTTLSeconds(3600) }
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 15 {
				o, err := st.Open(ctx, "acme", "busy", fill)
				if !assert.NoError(t, err) {
					return
				}
				switch (w + i) % 3 {
				case 0:
					_, err = st.DeleteWhere(ctx, "admin", session.ID(o.Session.ID))
				case 1:
					_, err = st.ExpireWhere(ctx, "admin", session.ID(o.Session.ID))
				}
				assert.NoError(t, err)
			}
		}()
	}
	wg.Wait()
	live := client.Session.Query().Where(session.Tenant("acme"), session.ExternalKey("busy"),
		session.StatusEQ(session.StatusActive)).IDsX(ctx)
	assert.LessOrEqual(t, len(live), 1)
	o, err := st.Open(ctx, "acme", "busy", fill)
	require.NoError(t, err)
	if len(live) == 1 {
		assert.Equal(t, live[0], o.Session.ID, "the one live session is the key's")
	}
	assert.Equal(t, o.Session.ID, client.SessionKey.GetX(ctx, store.KeyID("acme", "busy")).SessionID)
}
