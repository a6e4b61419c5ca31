package graph_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
)

func TestRegistryBadInputHasCodesAndWritesNothing(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "bad")
	other := newAgent(t, s, "other")
	a.turn("hi")
	other.turn("hi")
	a.read("recipes", map[string]any{"id": newUUID(), "name": "Thai Curry"})
	other.read("inventory", map[string]any{"id": newUUID(), "name": "rice"})

	tooMany := make([]map[string]any, 1001)
	for i := range tooMany {
		tooMany[i] = map[string]any{"id": newUUID(), "name": "x"}
	}
	longLabel := strings.Repeat("x", 1001)
	generate := `mutation($id: ID!, $type: String!, $content: Map!, $label: String) {
		recordGenerated(input: {sessionID: $id, entityType: $type, content: $content, label: $label}) { ref { ref } } }`
	cases := []struct {
		name, query string
		vars        map[string]any
		code        string
	}{
		{"unknown table", recordRead, map[string]any{"table": "spaceships", "records": []any{map[string]any{"id": newUUID()}}}, "UNKNOWN_ENTITY_TYPE"},
		{"unknown entity type", generate, map[string]any{"type": "spaceship", "content": map[string]any{"name": "x"}}, "UNKNOWN_ENTITY_TYPE"},
		{"record without id", recordRead, map[string]any{"table": "recipes", "records": []any{map[string]any{"name": "no id"}}}, "INVALID_RECORD"},
		{"id not a UUID", recordRead, map[string]any{"table": "recipes", "records": []any{map[string]any{"id": "recipe_1", "name": "x"}}}, "INVALID_ID"},
		{"record not an object", recordRead, map[string]any{"table": "recipes", "records": []any{"just text"}}, "INVALID_CONTENT"},
		{"content not an object", generate, map[string]any{"type": "recipe", "content": []any{1, 2}}, "INVALID_CONTENT"},
		{"label over 1,000 characters", generate, map[string]any{"type": "recipe", "content": map[string]any{"name": "x"}, "label": longLabel}, "INPUT_TOO_LARGE"},
		{"more than 1,000 records", recordRead, map[string]any{"table": "recipes", "records": tooMany}, "INPUT_TOO_LARGE"},
		{"ref from another session", `query($id: ID!) { session(id: $id) { resolveRefs(refs: ["inv_1"]) { ref } } }`, nil, "REF_NOT_FOUND"},
		{"retain another session's ref", `mutation($id: ID!) { retainRef(input: {sessionID: $id, ref: "inv_1", reason: "keep"}) { ref { ref } } }`, nil, "REF_NOT_FOUND"},
		{"unknown ref in a filter", `query($id: ID!) { session(id: $id) { translateFilters(table: "recipes", filters: [{field: "id", op: "eq", value: "recipe_7"}]) { pendingRefs } } }`, nil, "REF_NOT_FOUND"},
		{"ref of another type in a filter", `query($id: ID!) { session(id: $id) { translateFilters(table: "inventory", filters: [{field: "id", op: "eq", value: "recipe_1"}]) { pendingRefs } } }`, nil, "BAD_USER_INPUT"},
		{"update of a ref without artifact", `mutation($id: ID!) { updateArtifact(input: {sessionID: $id, ref: "recipe_1", content: {name: "y"}}) { ref { ref } } }`, nil, "BAD_USER_INPUT"},
		{"retain without a reason", `mutation($id: ID!) { retainRef(input: {sessionID: $id, ref: "recipe_1", reason: ""}) { ref { ref } } }`, nil, "BAD_USER_INPUT"},
		{"second open turn", `mutation($id: ID!) { beginTurn(input: {sessionID: $id, userMessage: "again"}) { turn { number } } }`, nil, "TURN_IN_PROGRESS"},
	}
	ctx := access.System(context.Background())
	refsBefore := s.Client.Ref.Query().CountX(ctx)
	eventsBefore := s.Client.Event.Query().CountX(ctx)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code := a.code(c.query, c.vars)
			assert.Equal(t, c.code, code)
		})
	}
	assert.Equal(t, refsBefore, s.Client.Ref.Query().CountX(ctx), "no bad request registered a ref")
	assert.Equal(t, eventsBefore, s.Client.Event.Query().CountX(ctx), "no bad request committed")
	assert.Equal(t, 0, s.Client.Artifact.Query().CountX(ctx))
}

// Writes reload entity types inside their transaction: with a pool smaller
// than the number of writers and a cache that always misses, a write that
// needed a second connection would wait forever.
func TestWritesNeverWaitForASecondConnection(t *testing.T) {
	s := apitest.New(t, func(c *app.Config) {
		c.MaxOpenConns = 2
		c.DomainCacheTTL = time.Nanosecond
	})
	a := newAgent(t, s, "small-pool")
	a.turn("go")
	ctx, cancel := context.WithTimeout(access.System(context.Background()), 20*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 5 {
				res := s.Do(t, recordRead, map[string]any{"id": a.id, "table": "recipes",
					"records": []any{map[string]any{"id": newUUID(), "name": "x"}}})
				assert.Empty(t, res.Errors)
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		require.FailNow(t, "writes deadlocked on the connection pool")
	}
	refs := a.refs("recipe_40")
	assert.Len(t, refs, 40, "every write committed")
}
