package graph_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// REF_NOT_FOUND and INVALID_RECORD name the input field at fault
// (extensions.field), so a client can point at the argument to fix: the
// index of the ref in a list, the record whose id is missing.
func TestRefAndRecordErrorsNameTheirField(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "fields")
	a.turn("hi")
	a.read("recipes", map[string]any{"id": newUUID(), "name": "Thai Curry"})
	gen := a.generate("meal_plan", map[string]any{"date": "2026-01-12", "meal_type": "dinner", "recipe_id": "recipe_1"})
	require.Equal(t, "gen_meal_plan_1", gen)

	cases := []struct {
		name, query string
		vars        map[string]any
		code, field string
	}{
		{"the second of resolveRefs' refs", `query($id: ID!) { session(id: $id) { resolveRefs(refs: ["recipe_1", "recipe_9"]) { ref } } }`, nil, "REF_NOT_FOUND", "refs[1]"},
		{"the second of readRefs' refs", `query($id: ID!) { session(id: $id) { readRefs(refs: ["recipe_1", "recipe_9"]) { records } } }`, nil, "REF_NOT_FOUND", "refs[1]"},
		{"retainRef's ref", `mutation($id: ID!) { retainRef(input: {sessionID: $id, ref: "recipe_9", reason: "keep"}) { ref { ref } } }`, nil, "REF_NOT_FOUND", "ref"},
		{"releaseRef's ref", `mutation($id: ID!) { releaseRef(input: {sessionID: $id, ref: "recipe_9"}) { ref { ref } } }`, nil, "REF_NOT_FOUND", "ref"},
		{"mentionEntity's second ref", `mutation($id: ID!) { mentionEntity(input: {sessionID: $id, refs: ["recipe_1", "recipe_9"]}) { refs { ref } } }`, nil, "REF_NOT_FOUND", "refs[1]"},
		{"updateArtifact's ref", `mutation($id: ID!) { updateArtifact(input: {sessionID: $id, ref: "gen_meal_plan_9", content: {date: "x"}}) { ref { ref } } }`, nil, "REF_NOT_FOUND", "ref"},
		{"clearArtifact's ref", `mutation($id: ID!) { clearArtifact(input: {sessionID: $id, ref: "gen_meal_plan_9"}) { ref { ref } } }`, nil, "REF_NOT_FOUND", "ref"},
		{"recordCreated's genRef", `mutation($id: ID!) { recordCreated(input: {sessionID: $id, entityType: "meal_plan", entityID: "` + newUUID() + `", genRef: "gen_meal_plan_9"}) { promoted } }`, nil, "REF_NOT_FOUND", "genRef"},
		{"applyEnrichment's label", `mutation($id: ID!) { applyEnrichment(input: {sessionID: $id, labels: [{ref: "recipe_1", label: "x"}, {ref: "recipe_9", label: "y"}]}) { refs { ref } } }`, nil, "REF_NOT_FOUND", "labels[1].ref"},
		{"a filter's value", `query($id: ID!) { session(id: $id) { translateFilters(table: "recipes", filters: [{field: "id", op: "eq", value: "recipe_7"}]) { pendingRefs } } }`, nil, "REF_NOT_FOUND", "filters[0].value"},
		{"a step's refs", recordStepResult, map[string]any{"step": 1, "kind": "READ", "refs": []string{"recipe_1", "recipe_9"}}, "REF_NOT_FOUND", "refs[1]"},
		{"the record without an id", recordRead, map[string]any{"table": "recipes", "records": []any{map[string]any{"id": newUUID(), "name": "a"}, map[string]any{"name": "no id"}}}, "INVALID_RECORD", "records[1].id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			vars := map[string]any{"id": a.id}
			for k, v := range c.vars {
				vars[k] = v
			}
			res := s.Do(t, c.query, vars)
			require.NotEmpty(t, res.Errors, "the request must fail")
			assert.Equal(t, c.code, res.Errors[0].Code(), res.Errors[0].Message)
			assert.Equal(t, c.field, res.Errors[0].Extensions["field"], res.Errors[0].Message)
		})
	}
}
