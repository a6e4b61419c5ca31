package store_test

import (
	"context"
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
	assert.Equal(t, "acme", evs[0].Tenant)
	assert.Equal(t, map[string]any{"keyID": key.ID.String()}, evs[0].Payload)
	assert.Equal(t, int64(1), evs[0].Sequence, "numbered at commit")

	again, err := st.RevokeKey(ctx, key.ID)
	require.NoError(t, err)
	assert.Equal(t, revoked.RevokedAt.Unix(), again.RevokedAt.Unix(), "revoking a revoked key changes nothing")
	assert.Equal(t, 1, client.Event.Query().Where(event.Kind(store.KindKeyRevoked)).CountX(ctx), "and records nothing")

	_, err = st.RevokeKey(ctx, uuid.New())
	assert.Equal(t, apperr.NotFound, apperr.CodeOf(err))
}
