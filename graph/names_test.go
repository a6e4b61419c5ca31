package graph_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// A tenant or key name must show every character it holds and stay short:
// openSession and createAPIKey refuse the rest with the field named.
func TestTenantAndKeyNamesAreValidated(t *testing.T) {
	s := apitest.New(t)
	for _, c := range []struct{ tenant, code string }{
		{"acme\u200b", "BAD_USER_INPUT"},
		{"acme\x1b[2J", "BAD_USER_INPUT"},
		{"\u202eemca", "BAD_USER_INPUT"},
		{"ac\u00a0me", "BAD_USER_INPUT"},
		{strings.Repeat("t", 201), "INPUT_TOO_LARGE"},
	} {
		res := s.Do(t, openSession, map[string]any{"in": map[string]any{"tenant": c.tenant, "externalKey": "k"}})
		require.Len(t, res.Errors, 1, "%q", c.tenant)
		assert.Equal(t, c.code, res.Errors[0].Code(), "%q", c.tenant)
		assert.Equal(t, "tenant", res.Errors[0].Extensions["field"], "%q", c.tenant)
	}
	res := s.Do(t, `mutation($name: String!) { createAPIKey(input: {name: $name, role: ADMIN}) { key } }`, map[string]any{"name": "ops\r\u2066"})
	require.Len(t, res.Errors, 1)
	assert.Equal(t, "BAD_USER_INPUT", res.Errors[0].Code())
	assert.Equal(t, "name", res.Errors[0].Extensions["field"])

	var opened openedSession
	s.MustDo(t, openSession, map[string]any{"in": map[string]any{"tenant": "Café Zoë-1 (東京)", "externalKey": "k"}}, &opened)
	assert.True(t, opened.OpenSession.Created)
}
