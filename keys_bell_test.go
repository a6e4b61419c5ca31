package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent/apikey"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
)

// `sessiongraph keys revoke`, run as its own process, rings the doorbell as
// the API does: a running server closes the revoked key's WebSocket 4403
// although its hub would not read the table on its own for an hour.
func TestKeysRevokeRingsTheDoorbellOfRunningServers(t *testing.T) {
	s := apitest.New(t, func(c *app.Config) { c.EventPollInterval = time.Hour })
	client := s.WithKey(s.NewKey(t, "CLIENT", "acme"))
	row, err := s.Client.APIKey.Query().Where(apikey.RoleEQ(apikey.RoleClient)).Only(access.System(context.Background()))
	require.NoError(t, err)
	ws := client.DialWS(t, nil)

	out, stderr, code := runBinary(t, binaryEnv("DATABASE_URL="+s.DSN), "keys", "revoke", row.ID.String())
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "revoked CLIENT key")

	closed := make(chan error, 1)
	go func() {
		for {
			if _, err := ws.TryRead(time.Minute); err != nil {
				closed <- err
				return
			}
		}
	}()
	select {
	case err := <-closed:
		var ce websocket.CloseError
		require.True(t, errors.As(err, &ce), "the socket ended without a close frame: %v", err)
		assert.Equal(t, websocket.StatusCode(4403), ce.Code)
	case <-time.After(30 * time.Second):
		t.Fatal("the running server did not hear of the revocation within 30s (its poll is an hour away)")
	}
}
