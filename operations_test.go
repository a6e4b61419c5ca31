package main

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/lib/pq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/testdb"
	"sessiongraph/migrations"
)

// `migrate` as a deploy step: on an empty database status says nothing is
// applied (exit 1, so a deploy can gate on it), migrate applies every
// migration and reports the version, and status then agrees (exit 0).
func TestMigrateAppliesAndReportsTheSchemaVersion(t *testing.T) {
	empty := testdb.New(t, func(context.Context, string) error { return nil }, "empty")
	env := binaryEnv("DATABASE_URL=" + empty)
	latest, err := migrations.Latest()
	require.NoError(t, err)

	out, stderr, code := runBinary(t, env, "migrate", "status")
	assert.Equal(t, 1, code, stderr)
	assert.Equal(t, fmt.Sprintf("no migration applied; this binary's latest is %d: run sessiongraph migrate\n", latest), out)

	out, stderr, code = runBinary(t, env, "migrate")
	assert.Equal(t, 0, code, stderr)
	assert.Equal(t, fmt.Sprintf("schema at version %d, this binary's latest\n", latest), out)

	out, stderr, code = runBinary(t, env, "migrate", "status")
	assert.Equal(t, 0, code, stderr)
	assert.Equal(t, fmt.Sprintf("schema at version %d, this binary's latest\n", latest), out)

	_, stderr, code = runBinary(t, env, "migrate", "sideways")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, `sessiongraph migrate: unknown command "sideways"`)
}

// seedUserSession opens a session of user in tenant and runs a turn that
// leaves a turn, refs, an artifact, a step result and events; its texts
// carry marker, so that any trace of them can be searched for.
func seedUserSession(t *testing.T, s *apitest.Server, tenant, user, marker string) string {
	t.Helper()
	var opened struct {
		OpenSession struct{ Session struct{ ID string } }
	}
	s.MustDo(t, `mutation($t: String!, $k: String!, $u: String!) { openSession(input: {tenant: $t, externalKey: $k, userID: $u,
		systemPrompt: "prompt"}) { session { id } } }`, map[string]any{"t": tenant, "k": "key-" + marker, "u": user}, &opened)
	id := opened.OpenSession.Session.ID
	s.MustDo(t, `mutation($s: ID!, $m: String!) { beginTurn(input: {sessionID: $s, userMessage: $m}) { turn { number } } }`,
		map[string]any{"s": id, "m": "message " + marker}, nil)
	s.MustDo(t, `mutation($s: ID!, $r: [Map!]!) { recordRead(input: {sessionID: $s, table: "recipes", step: 1, records: $r}) { refs { ref } } }`,
		map[string]any{"s": id, "r": []map[string]any{{"id": uuid.NewString(), "name": "Dish " + marker}}}, nil)
	s.MustDo(t, `mutation($s: ID!, $c: Map!) { recordGenerated(input: {sessionID: $s, entityType: "meal_plan", step: 2, content: $c}) { ref { ref } } }`,
		map[string]any{"s": id, "c": map[string]any{"date": "2026-01-12", "meal_type": "dinner " + marker, "recipe_id": "recipe_1"}}, nil)
	s.MustDo(t, `mutation($s: ID!, $i: [String!]!) { recordItems(input: {sessionID: $s, items: $i}) { turn { number } } }`,
		map[string]any{"s": id, "i": []string{`{"type":"function_call","name":"find_dish","call_id":"call_1","arguments":"{\"q\":\"` + marker + `\"}"}`,
			`{"type":"function_call_output","call_id":"call_1","output":"Dish ` + marker + `"}`}}, nil)
	s.MustDo(t, `mutation($s: ID!, $m: String!) { endTurn(input: {sessionID: $s, assistantMessage: $m}) { turn { number } } }`,
		map[string]any{"s": id, "m": "reply " + marker}, nil)
	return id
}

// traces counts, in every table of the database, the rows whose text
// holds needle.
func traces(t *testing.T, db *sql.DB, needle string) map[string]int {
	t.Helper()
	ctx := context.Background()
	rows, err := db.QueryContext(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`)
	require.NoError(t, err)
	var tables []string
	for rows.Next() {
		var name string
		require.NoError(t, rows.Scan(&name))
		tables = append(tables, name)
	}
	require.NoError(t, rows.Err())
	rows.Close()
	require.Greater(t, len(tables), 5)
	found := map[string]int{}
	for _, table := range tables {
		var n int
		q := fmt.Sprintf(`SELECT count(*) FROM %s AS r WHERE strpos(r::text, $1) > 0`, pq.QuoteIdentifier(table))
		require.NoError(t, db.QueryRowContext(ctx, q, needle).Scan(&n))
		if n > 0 {
			found[table] = n
		}
	}
	return found
}

// A privacy request: delete-user removes every session the user left in
// the tenant, and no row of any table holds anything of them afterwards
// (their id, their key, their messages, their records), but the
// session.deleted events that say, with the reason, that the sessions
// went. The same user id in another tenant, and other users, keep all
// theirs.
func TestDeleteUserLeavesNothingOfTheUser(t *testing.T) {
	s := apitest.New(t)
	user := "user-" + uuid.NewString()
	gone := []string{
		seedUserSession(t, s, "acme", user, "forget-"+uuid.NewString()),
		seedUserSession(t, s, "acme", user, "forget-"+uuid.NewString()),
	}
	keepOther := "keep-" + uuid.NewString()
	other := seedUserSession(t, s, "acme", "someone-else", keepOther)
	keepTenant := "keep-" + uuid.NewString()
	sameIDElsewhere := seedUserSession(t, s, "globex", user, keepTenant)
	// One of the user's sessions expired: it goes too.
	s.MustDo(t, `mutation($s: ID!) { expireSession(input: {id: $s}) { session { status } } }`, map[string]any{"s": gone[1]}, nil)

	db, err := sql.Open("postgres", s.DSN)
	require.NoError(t, err)
	defer db.Close()
	before := traces(t, db, keepOther)
	require.Contains(t, before, "turns")
	forgotten := traces(t, db, "forget-")
	for _, table := range []string{"sessions", "session_keys", "turns", "refs", "artifacts", "events"} {
		require.Contains(t, forgotten, table, "the search finds the user's rows before the deletion: %v", forgotten)
	}

	out, stderr, code := runBinary(t, binaryEnv("DATABASE_URL="+s.DSN), "delete-user", "-tenant", "acme", "-user", user)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, fmt.Sprintf("deleted 2 sessions of user %q in tenant %q\n", user, "acme"), out)

	for _, id := range gone {
		found := traces(t, db, id)
		assert.Equal(t, map[string]int{"events": 1}, found, "only the deletion event names session %s", id)
		var kind, payload string
		require.NoError(t, db.QueryRow(`SELECT kind, payload::text FROM events WHERE session_id = $1`, id).Scan(&kind, &payload))
		assert.Equal(t, "session.deleted", kind)
		assert.JSONEq(t, `{"reason":"privacy"}`, payload)
		assert.Equal(t, "NOT_FOUND", s.ErrorCode(t, `query($s: ID!) { session(id: $s) { id } }`, map[string]any{"s": id}))
	}
	assert.Equal(t, map[string]int{}, traces(t, db, "forget-"), "no message, record or key of the user's sessions remains")
	// The user id remains only on the other tenant's session.
	assert.Equal(t, map[string]int{"sessions": 1}, traces(t, db, user))

	assert.Equal(t, before, traces(t, db, keepOther), "another user's rows are untouched")
	assert.Contains(t, traces(t, db, keepTenant), "turns", "the same user id in another tenant keeps its rows")
	for _, id := range []string{other, sameIDElsewhere} {
		var got struct{ Session struct{ ID string } }
		s.MustDo(t, `query($s: ID!) { session(id: $s) { id } }`, map[string]any{"s": id}, &got)
		assert.Equal(t, id, got.Session.ID)
	}

	_, stderr, code = runBinary(t, binaryEnv("DATABASE_URL="+s.DSN), "delete-user", "-tenant", "acme")
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "usage:")
}
