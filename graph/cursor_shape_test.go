package graph_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/graph/scalar"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
)

// A cursor's tag is computable, so a client can forge a cursor that is
// spelled right and names the right connection but holds order values of
// another count or type than that connection's cursors: built here as the
// server builds its own. Each is INVALID_CURSOR before anything runs; they
// reached ent's pager or PostgreSQL and answered INTERNAL, logged at ERROR.
func TestForgedCursorsOfAnotherShapeAreInvalid(t *testing.T) {
	var logs logLines
	s := apitest.New(t, func(c *app.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
	sessions := seedSessions(t, s, "acme", 3)
	addTurns(t, s, sessions[0].ID, 3)
	before := dataDigest(t, s)
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	forge := func(scope scalar.CursorScope, value any) string {
		return scalar.EncodeCursor(scalar.Cursor{ID: uuid.New(), Value: value}, scope)
	}
	byCreatedAt := scalar.CursorScope{Field: "Query.sessions", Order: "CREATED_AT ASC"}
	unordered := scalar.CursorScope{Field: "Query.sessions"}
	turns := scalar.CursorScope{Field: "Session.turns", Parent: sessions[0].ID.String(), Order: "NUMBER ASC"}
	keys := scalar.CursorScope{Field: "Query.apiKeys", Order: "CREATED_AT DESC"}

	const sessionsPage = `query($c: Cursor, $o: [SessionOrder!]) { sessions(first: 2, after: $c, orderBy: $o) { totalCount edges { node { id } } } }`
	const turnsPage = `query($id: ID!, $c: Cursor) { node(id: $id) { ... on Session {
		turns(first: 2, after: $c, orderBy: {field: NUMBER}) { edges { node { number } } } } } }`
	const keysPage = `query($c: Cursor) { apiKeys(first: 2, after: $c) { edges { node { name } } } }`
	createdAt := []any{map[string]any{"field": "CREATED_AT"}}
	for _, c := range []struct {
		name, query string
		order       any
		cursor      string
		message     string
	}{
		{"two values for one order", sessionsPage, createdAt, forge(byCreatedAt, []any{at, 1}),
			"after: this cursor holds 2 order values, but Query.sessions with this orderBy pages by 1"},
		{"a string for a time", sessionsPage, createdAt, forge(byCreatedAt, []any{"yesterday"}),
			"after: this cursor holds a string for CREATED_AT, which orders by a time"},
		{"no value for a time", sessionsPage, createdAt, forge(byCreatedAt, []any{nil}),
			"after: this cursor holds no value for CREATED_AT, which is never null"},
		{"a time, not a list", sessionsPage, createdAt, forge(byCreatedAt, at),
			"after: this cursor holds one order value, not a list, but Query.sessions with this orderBy pages by 1"},
		{"a value where there is no order", sessionsPage, nil, forge(unordered, []any{at}),
			"after: this cursor holds 1 order value, but Query.sessions with this orderBy pages by 0"},
		{"a string for a turn's number", turnsPage, nil, forge(turns, []any{"one"}),
			"after: this cursor holds a string for NUMBER, which orders by an integer"},
		{"a string for a key's time", keysPage, nil, forge(keys, "yesterday"),
			"after: this cursor holds a string for CREATED_AT, which orders by a time"},
		{"a list for a key's one order", keysPage, nil, forge(keys, []any{at}),
			"after: this cursor holds a list for CREATED_AT, which orders by a time"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := s.Do(t, c.query, map[string]any{"c": c.cursor, "o": c.order, "id": sessions[0].ID})
			require.Len(t, res.Errors, 1, "data: %s", res.Data)
			e := res.Errors[0]
			assert.Equal(t, "INVALID_CURSOR", e.Code(), e.Message)
			assert.Equal(t, "after", e.Extensions["field"])
			assert.Equal(t, c.message+": pass back endCursor or startCursor from the same field with the same orderBy", e.Message)
			assert.Nil(t, res.Data, "refused before anything ran")
		})
	}
	for _, r := range logs.records(t) {
		assert.NotEqual(t, "ERROR", r["level"], "%v", r)
	}
	assert.Equal(t, before, dataDigest(t, s))

	// Forged in the right shape, a cursor pages like one handed out.
	var page struct{ Sessions struct{ TotalCount int } }
	s.MustDo(t, sessionsPage, map[string]any{"c": forge(byCreatedAt, []any{at}), "o": createdAt}, &page)
	assert.Equal(t, 3, page.Sessions.TotalCount)
	s.MustDo(t, keysPage, map[string]any{"c": forge(keys, at)}, nil)
}
