package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// sessionSeen is everything of a session the API shows that an import
// must carry: state, turns, refs, artifacts, events, a context build, the
// receipts' model calls and their totals.
const sessionSeen = `query($s: ID!) { session(id: $s) { id tenant externalKey userID status systemPrompt currentTurn
	createdAt lastActiveAt expiresAt
	turns(first: 50, orderBy: {field: NUMBER}) { edges { node { number userMessage assistantMessage assistantSummary status startedAt completedAt
		receipts { id node modelCalls { id model inputTokens outputTokens latencyMs cost finishReason error } } } } }
	modelCallTotals { calls failedCalls inputTokens outputTokens latencyMs cost }
	refs(first: 50, orderBy: {field: REF}) { edges { node { ref label action entityType entityID detailLevel turnCreated turnLastReferenced activeReason } } }
	artifacts(first: 50, orderBy: {field: CREATED_AT}) { edges { node { label status revision content createdTurn } } }
	events(first: 50, orderBy: {field: SEQUENCE}) { edges { node { sequence tenant kind turn payload createdAt } } }
	context(node: ACT) { text tokenCount } } }`

// seen answers what the API shows of session id.
func seen(t *testing.T, s *apitest.Server, id string) map[string]any {
	t.Helper()
	var out struct{ Session map[string]any }
	s.MustDo(t, sessionSeen, map[string]any{"s": id}, &out)
	require.NotNil(t, out.Session)
	return out.Session
}

// A session exported from one database and imported into a fresh one is
// the same through the API: its state, turns, refs, artifacts, events
// (numbers, kinds, turns, payloads, times) and context; the import adds one
// session.imported event after them. Importing it again is CONFLICT.
func TestAnExportedSessionImportsIntoAFreshDatabase(t *testing.T) {
	from := apitest.New(t)
	id := seedUserSession(t, from, "acme", "u-1", "exported-"+uuid.NewString())
	from.MustDo(t, `mutation($s: ID!) { retainRef(input: {sessionID: $s, ref: "recipe_1", reason: "the user likes it"}) { ref { ref } } }`,
		map[string]any{"s": id}, nil)
	from.MustDo(t, `mutation($s: ID!) { beginTurn(input: {sessionID: $s, userMessage: "save it"}) { turn { number } } }`, map[string]any{"s": id}, nil)
	from.MustDo(t, `mutation($s: ID!) { recordContext(input: {sessionID: $s, node: ACT}) { receipt { id } } }`, map[string]any{"s": id}, nil)
	from.MustDo(t, `mutation($s: ID!) { recordModelCall(input: {sessionID: $s, node: ACT, model: "gpt-4o", inputTokens: 900,
		outputTokens: 80, latencyMs: 700, cost: 0.0004, error: "timeout"}) { modelCall { id } } }`, map[string]any{"s": id}, nil)
	from.MustDo(t, `mutation($s: ID!) { recordCreated(input: {sessionID: $s, entityType: "meal_plan",
		entityID: "0190a5b4-0000-7000-8000-0000000000aa", genRef: "gen_meal_plan_1"}) { promoted } }`, map[string]any{"s": id}, nil)

	doc, stderr, code := runBinary(t, binaryEnv("DATABASE_URL="+from.DSN), "export-session", id)
	require.Equal(t, 0, code, stderr)
	var x struct {
		Format        string
		SchemaVersion uint
		Events        []json.RawMessage
	}
	require.NoError(t, json.Unmarshal([]byte(doc), &x))
	assert.Equal(t, "sessiongraph.session/v1", x.Format)
	var began []int
	for _, raw := range x.Events {
		var ev struct {
			Kind string
			Turn *int
		}
		require.NoError(t, json.Unmarshal(raw, &ev))
		if ev.Kind == "turn.began" && ev.Turn != nil {
			began = append(began, *ev.Turn)
		}
	}
	assert.Equal(t, []int{1, 2}, began, "the document's events carry their turn")
	path := filepath.Join(t.TempDir(), "session.json")
	require.NoError(t, os.WriteFile(path, []byte(doc), 0o600))

	to := apitest.New(t)
	out, stderr, code := runBinary(t, binaryEnv("DATABASE_URL="+to.DSN), "import-session", "-file", path)
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, regexp.MustCompile(`^imported session `+id+`: 2 turns, 2 refs, 1 artifacts, \d+ events\n$`), out)

	want, got := seen(t, from, id), seen(t, to, id)
	wantEvents := want["events"].(map[string]any)["edges"].([]any)
	gotEvents := got["events"].(map[string]any)["edges"].([]any)
	require.Len(t, gotEvents, len(wantEvents)+1)
	assert.Equal(t, wantEvents, gotEvents[:len(wantEvents)], "every event as it was")
	last := gotEvents[len(wantEvents)].(map[string]any)["node"].(map[string]any)
	assert.Equal(t, "session.imported", last["kind"])
	assert.Equal(t, float64(len(wantEvents)+1), last["sequence"])
	assert.Equal(t, map[string]any{"events": float64(len(wantEvents))}, last["payload"])
	delete(want, "events")
	delete(got, "events")
	assert.Equal(t, want, got)

	// The imported session lives on: its key opens it, its next turn follows.
	var opened struct{ OpenSession struct{ Created bool } }
	to.MustDo(t, `mutation { openSession(input: {tenant: "acme", externalKey: "`+sessionKeyOf(t, from, id)+`"}) { created } }`, nil, &opened)
	assert.False(t, opened.OpenSession.Created, "the imported session is its key's live session")

	_, stderr, code = runBinary(t, binaryEnv("DATABASE_URL="+to.DSN), "import-session", "-file", path)
	assert.Equal(t, 1, code)
	assert.Equal(t, "sessiongraph import-session: CONFLICT: session "+id+" exists already in this database\n", stderr)
}

func sessionKeyOf(t *testing.T, s *apitest.Server, id string) string {
	t.Helper()
	var out struct{ Session struct{ ExternalKey string } }
	s.MustDo(t, `query($s: ID!) { session(id: $s) { externalKey } }`, map[string]any{"s": id}, &out)
	return out.Session.ExternalKey
}
