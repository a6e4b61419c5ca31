package graph_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
)

// openSession with a domain the server has no entity types for is refused
// at once (UNKNOWN_DOMAIN, on the domain field, naming the domains there
// are) and creates nothing; once the domain has a type, the same call opens
// the session.
func TestOpenSessionRefusesAnUnknownDomain(t *testing.T) {
	s := apitest.New(t)
	ctx := access.System(context.Background())
	before := s.Client.Session.Query().CountX(ctx)

	res := s.Do(t, openSession, map[string]any{"in": map[string]any{"tenant": "acme", "externalKey": "garden-1", "domain": "garden"}})
	require.Len(t, res.Errors, 1)
	e := res.Errors[0]
	assert.Equal(t, "UNKNOWN_DOMAIN", e.Code())
	assert.Equal(t, "domain", e.Extensions["field"])
	assert.Equal(t, `domain "garden" has no entity types: load its domain file (-domain-file) or define them (upsertEntityType) first; the domains are kitchen`, e.Message)
	assert.Equal(t, before, s.Client.Session.Query().CountX(ctx), "nothing was created")

	s.MustDo(t, `mutation { upsertEntityType(input: {domain: "garden", name: "plant", table: "plants", labelField: "name"}) { entityType { name } } }`, nil, nil)
	opened := open(t, s, map[string]any{"tenant": "acme", "externalKey": "garden-1", "domain": "garden"})
	assert.True(t, opened.OpenSession.Created)
	assert.Equal(t, "garden", opened.OpenSession.Session.Domain)
}
