package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent/apikey"
	"sessiongraph/ent/event"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/store"
)

func TestRevokeKeyRecordsOneEventAboutNoSession(t *testing.T) {
	st, client, _ := newStore(t)
	ctx := context.Background()
	key := client.APIKey.Create().SetName("runtime").SetRole(apikey.RoleClient).SetTenant("acme").
		SetHash("hash").SetPrefix("sg_abcdef").SaveX(ctx)

	revoked, err := st.RevokeKey(ctx, key.ID)
	require.NoError(t, err)
	require.NotNil(t, revoked.RevokedAt)
	evs := client.Event.Query().AllX(ctx)
	require.Len(t, evs, 1)
	assert.Equal(t, store.KindKeyRevoked, evs[0].Kind)
	assert.Equal(t, uuid.Nil, evs[0].SessionID, "no session's")
	assert.Equal(t, store.SystemSession, evs[0].SessionID, "the system session's")
	assert.Equal(t, "acme", evs[0].Tenant)
	assert.Equal(t, map[string]any{"keyID": key.ID.String()}, evs[0].Payload)
	assert.Equal(t, int64(1), evs[0].Sequence, "the system session's first")

	again, err := st.RevokeKey(ctx, key.ID)
	require.NoError(t, err)
	assert.Equal(t, revoked.RevokedAt.Unix(), again.RevokedAt.Unix(), "revoking a revoked key changes nothing")
	assert.Equal(t, 1, client.Event.Query().Where(event.Kind(store.KindKeyRevoked)).CountX(ctx), "and records nothing")

	_, err = st.RevokeKey(ctx, uuid.New())
	assert.Equal(t, apperr.NotFound, apperr.CodeOf(err))
}

// Revocations of many keys at once are numbered 1, 2, 3, … in the system
// session, which has no row to lock: its advisory lock stands in.
func TestConcurrentRevocationsAreNumberedWithoutAGap(t *testing.T) {
	st, client, _ := newStore(t)
	ctx := context.Background()
	const keys = 12
	var wg sync.WaitGroup
	for i := range keys {
		key := client.APIKey.Create().SetName("runtime").SetRole(apikey.RoleClient).SetTenant("acme").
			SetHash(fmt.Sprintf("hash-%d", i)).SetPrefix("sg_abcdef").SaveX(ctx)
		wg.Go(func() {
			_, err := st.RevokeKey(ctx, key.ID)
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	evs := client.Event.Query().Where(event.SessionID(store.SystemSession)).Order(event.BySequence()).AllX(ctx)
	require.Len(t, evs, keys)
	for i, e := range evs {
		assert.Equal(t, int64(i+1), e.Sequence)
	}
}
