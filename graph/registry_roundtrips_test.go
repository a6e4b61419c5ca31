package graph_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// storedRefFields are all of a ref's own fields: what a write's payload
// answers from the rows it stored, without reading them back.
const storedRefFields = `id sessionID ref entityType entityID label action detailLevel fullTurn turnCreated
	turnLastReferenced sourceStep turnPromoted activeReason enrichTable enrichNameColumn createdAt updatedAt`

// TestRegistryWritesAnswerFromWhatTheyStored: recordRead, recordGenerated
// and recordCreated answer their refs from the rows they stored, in the
// statements of their one commit, and those refs are what a later read
// returns, field for field.
func TestRegistryWritesAnswerFromWhatTheyStored(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "stored")
	a.turn("plan my week")
	a.read("meal_plans", map[string]any{"id": newUUID(), "date": "2026-01-12", "meal_type": "dinner"}) // warm the domain cache

	// run is a.do for operations that ask for ids, which are UUIDs.
	run := func(query string, vars map[string]any) json.RawMessage {
		t.Helper()
		if vars == nil {
			vars = map[string]any{}
		}
		vars["id"] = a.id
		res := s.Do(t, query, vars)
		require.Empty(t, res.Errors, "operation failed")
		return res.Data
	}
	// cost runs an operation and returns its data and its round trips.
	cost := func(query string, vars map[string]any) (json.RawMessage, int64) {
		t.Helper()
		before := s.Statements()
		data := run(query, vars)
		return data, s.Statements() - before
	}
	// sameAsRead checks each ref of a payload against a later read of it.
	sameAsRead := func(refs []map[string]any) {
		t.Helper()
		require.NotEmpty(t, refs)
		for _, r := range refs {
			var read struct {
				Session struct {
					Refs struct {
						Edges []struct{ Node map[string]any }
					} `json:"refs"`
				} `json:"session"`
			}
			raw := run(`query($id: ID!, $ref: String!) { session(id: $id) { refs(first: 1, where: {ref: $ref}) { edges { node { `+storedRefFields+` } } } } }`,
				map[string]any{"ref": r["ref"]})
			require.NoError(t, json.Unmarshal(raw, &read))
			require.Len(t, read.Session.Refs.Edges, 1)
			assert.Equal(t, read.Session.Refs.Edges[0].Node, r, "%s as the write answered and as read", r["ref"])
		}
	}

	records := make([]map[string]any, 20)
	for i := range records {
		records[i] = map[string]any{"id": newUUID(), "date": fmt.Sprintf("2026-01-%02d", i+1), "meal_type": "dinner", "recipe_id": newUUID()}
	}
	raw, n := cost(`mutation($id: ID!, $records: [Map!]!) { recordRead(input: {sessionID: $id, table: "meal_plans", records: $records}) {
		refs { `+storedRefFields+` } } }`, map[string]any{"records": records})
	// Two pgx batches (internal/store): BEGIN with the session lock and the
	// known refs, then the upsert with the session with its event and
	// COMMIT. It was 8:
	// the refs were read back after the commit, and the event was a
	// statement of its own; then 6, BEGIN and COMMIT alone; then 4, the
	// known refs were read after the lock's answer and the upsert read
	// back the rows it wrote.
	assert.Equal(t, int64(2+apitest.AuthStatements), n, "recordRead of 20 records answers its refs from the upsert, no read-back")
	read := decode[struct {
		RecordRead struct{ Refs []map[string]any } `json:"recordRead"`
	}](t, raw)
	assert.Len(t, read.RecordRead.Refs, 40, "20 meal plans and the 20 recipes they point at")
	sameAsRead(read.RecordRead.Refs)

	raw, n = cost(`mutation($id: ID!) { recordGenerated(input: {sessionID: $id, entityType: "recipe", step: 1,
		content: {name: "Dal", ingredients: ["dal"], instructions: "Simmer."}}) { ref { `+storedRefFields+` } } }`, nil)
	// BEGIN with the session lock; then the ref, its artifact, the step's
	// result, the session with its event and COMMIT, in one batch. It was
	// 8: the ref was read back after the commit, and the event was a
	// statement of its own; the step's result (one upsert that merges) came
	// later; then 7, BEGIN and COMMIT alone; then 5, the ref's upsert
	// alone; then 4, the artifact and the step's result each a round trip.
	assert.Equal(t, int64(2+apitest.AuthStatements), n, "recordGenerated answers its ref from the upsert, no read-back")
	gen := decode[struct {
		RecordGenerated struct{ Ref map[string]any } `json:"recordGenerated"`
	}](t, raw)
	sameAsRead([]map[string]any{gen.RecordGenerated.Ref})

	raw, n = cost(`mutation($id: ID!, $gen: String!, $entity: UUID!) { recordCreated(input: {sessionID: $id, entityType: "recipe",
		entityID: $entity, genRef: $gen}) { promoted ref { `+storedRefFields+` } } }`,
		map[string]any{"gen": gen.RecordGenerated.Ref["ref"], "entity": newUUID()})
	// BEGIN with the session lock and the refs with their artifacts
	// joined; then the ref with its artifact, the session with its event
	// and COMMIT. It was 10: the artifacts were read in a statement of
	// their own, the ref was read back after the commit, and the event was
	// a statement of its own; then 7, BEGIN and COMMIT alone; then 5, the
	// refs read after the lock's answer, the ref's upsert alone; then 3,
	// the artifact a round trip of its own.
	assert.Equal(t, int64(2+apitest.AuthStatements), n, "recordCreated joins the artifacts and answers its ref from the upsert, no read-back")
	created := decode[struct {
		RecordCreated struct {
			Promoted bool
			Ref      map[string]any
		} `json:"recordCreated"`
	}](t, raw)
	assert.True(t, created.RecordCreated.Promoted)
	assert.Equal(t, gen.RecordGenerated.Ref["ref"], created.RecordCreated.Ref["ref"])
	sameAsRead([]map[string]any{created.RecordCreated.Ref})
}
