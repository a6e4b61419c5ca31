package engine_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/engine"
)

// Ranges are checked before any arithmetic, so a value past what a
// Duration can hold is refused rather than overflowing into one that
// passes: 2^62 seconds of TTL became a negative Duration, which passed the
// one-year check and expired the session at once. (The API refuses such
// an Int before the engine sees it; other callers of the engine do not.)
func TestHugeSecondsAreRefusedNotOverflowed(t *testing.T) {
	s := apitest.New(t)
	ctx := access.System(context.Background())
	huge := 1 << 62
	_, err := s.Engine.Sessions.OpenSession(ctx, engine.OpenSessionInput{Tenant: "acme", ExternalKey: "k", TTLSeconds: &huge})
	require.Error(t, err)
	assert.Equal(t, apperr.BadUserInput, apperr.CodeOf(err))

	opened, err := s.Engine.Sessions.OpenSession(ctx, engine.OpenSessionInput{Tenant: "acme", ExternalKey: "k"})
	require.NoError(t, err)
	_, err = s.Engine.Sessions.UpdateSession(ctx, engine.UpdateSessionInput{ID: opened.Session.ID, TTLSeconds: &huge})
	assert.Equal(t, apperr.BadUserInput, apperr.CodeOf(err))
	_, err = s.Engine.Sessions.PurgeExpired(ctx, &huge)
	assert.Equal(t, apperr.BadUserInput, apperr.CodeOf(err))

	after, err := s.Engine.Sessions.Session(ctx, opened.Session.ID)
	require.NoError(t, err)
	assert.Equal(t, opened.Session.ExpiresAt.UTC(), after.ExpiresAt.UTC(), "nothing changed")
}
