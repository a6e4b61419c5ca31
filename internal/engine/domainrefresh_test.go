package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
	"sessiongraph/internal/contextbuild"
	"sessiongraph/internal/engine"
)

// A domain read again when its cache entry is old, and found unchanged, is
// the same value: remembered builds are keyed by it, so the build after a
// small write is still patched across the refresh. Before, every refresh
// (each DomainCacheTTL, 10 s) made the next build of every session read
// its rows, and the patch tests failed when a loaded machine stretched them
// past 10 s.
func TestARefreshedUnchangedDomainKeepsBuildsPatchable(t *testing.T) {
	s := apitest.New(t, func(c *app.Config) { c.DomainCacheTTL = time.Nanosecond })
	ctx := access.System(context.Background())
	first, err := s.Engine.Domains.Domain(ctx, "kitchen")
	require.NoError(t, err)
	again, err := s.Engine.Domains.Domain(ctx, "kitchen")
	require.NoError(t, err)
	assert.True(t, first == again, "read again, unchanged: the same value")

	opened, err := s.Engine.Sessions.OpenSession(ctx, engine.OpenSessionInput{Tenant: "acme", ExternalKey: "refresh"})
	require.NoError(t, err)
	id := opened.Session.ID
	_, err = s.Engine.Turns.BeginTurn(ctx, id, "what can I cook?")
	require.NoError(t, err)
	recipes := "recipes"
	read := func(name string) {
		_, err := s.Engine.Writes.RecordRead(ctx, engine.RecordReadInput{SessionID: id, Table: &recipes,
			Records: []map[string]any{{"id": "0198c1f2-0000-7000-8000-00000000000" + name[:1], "name": name}}})
		require.NoError(t, err)
	}
	build := func() {
		sess, err := s.Engine.Sessions.Session(ctx, id)
		require.NoError(t, err)
		_, err = s.Engine.Builds.Context(ctx, sess, contextbuild.Think, nil)
		require.NoError(t, err)
	}
	read("1 Gratin")
	build()
	before := s.Engine.Builds.PatchedBuilds()
	read("2 Soup")
	build()
	assert.Equal(t, before+1, s.Engine.Builds.PatchedBuilds(), "the build after the read is patched, the domain read again between")
}
