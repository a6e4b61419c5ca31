package graph_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent/event"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
)

// The four calls that take records or filters of one entity type accept it
// by name (entityType) or, for a runtime that only knows where its rows came
// from, by table: exactly one, or both when they agree.
func TestEntityTypeOrTableNamesTheTypeOnce(t *testing.T) {
	s := apitest.New(t)
	plan, recipe := newUUID(), newUUID()
	row := map[string]any{"id": plan, "date": "2026-01-12", "meal_type": "lunch", "recipe_id": recipe}
	translated := []any{map[string]any{"id": "meal_plan_1", "date": "2026-01-12", "meal_type": "lunch", "recipe_id": "recipe_1"}}
	labelled := []any{map[string]any{"id": "meal_plan_1", "date": "2026-01-12", "meal_type": "lunch", "recipe_id": "recipe_1",
		"_recipe_id_label": "Butter Chicken"}}

	calls := []struct {
		name  string
		query string
		// read registers the meal plan first, for the calls that need its refs.
		read bool
		vars map[string]any
		want any
	}{
		{"recordRead", `mutation($id: ID!, $entityType: String, $table: String, $records: [Map!]!) {
			recordRead(input: {sessionID: $id, entityType: $entityType, table: $table, records: $records}) { records } }`,
			false, map[string]any{"records": []any{row}}, map[string]any{"recordRead": map[string]any{"records": translated}}},
		{"recordUpdated", `mutation($id: ID!, $entityType: String, $table: String, $records: [Map!]!) {
			recordUpdated(input: {sessionID: $id, entityType: $entityType, table: $table, records: $records}) { records } }`,
			false, map[string]any{"records": []any{row}}, map[string]any{"recordUpdated": map[string]any{"records": translated}}},
		{"applyEnrichment", `mutation($id: ID!, $entityType: String, $table: String, $records: [Map!]) {
			applyEnrichment(input: {sessionID: $id, entityType: $entityType, table: $table, records: $records,
				labels: [{ref: "recipe_1", label: "Butter Chicken"}]}) { records } }`,
			true, map[string]any{"records": translated}, map[string]any{"applyEnrichment": map[string]any{"records": labelled}}},
		{"translateFilters", `query($id: ID!, $entityType: String, $table: String) { session(id: $id) {
			translateFilters(entityType: $entityType, table: $table, filters: [{field: "recipe_id", op: "eq", value: "recipe_1"}]) {
				filters { field op value } } } }`,
			true, map[string]any{}, map[string]any{"session": map[string]any{"translateFilters": map[string]any{
				"filters": []any{map[string]any{"field": "recipe_id", "op": "eq", "value": recipe}}}}}},
	}
	names := []struct {
		name           string
		vars           map[string]any
		field, message string
	}{
		{"entity type only", map[string]any{"entityType": "meal_plan"}, "", ""},
		{"table only", map[string]any{"table": "meal_plans"}, "", ""},
		{"both, naming the same type", map[string]any{"entityType": "meal_plan", "table": "meal_plans"}, "", ""},
		{"neither", map[string]any{}, "entityType",
			"give entityType (the type's name, such as recipe) or table (its database table, such as recipes)"},
		{"both, naming different types", map[string]any{"entityType": "meal_plan", "table": "recipes"}, "table",
			`entityType "meal_plan" and table "recipes" disagree: table "recipes" holds entity type "recipe"; give only one of them`},
	}
	for _, c := range calls {
		for _, n := range names {
			t.Run(c.name+"/"+n.name, func(t *testing.T) {
				a := newAgent(t, s, c.name+"/"+n.name)
				a.turn("what's for lunch?")
				if c.read {
					a.read("meal_plans", row)
				}
				vars := map[string]any{"id": a.id}
				for k, v := range c.vars {
					vars[k] = v
				}
				for k, v := range n.vars {
					vars[k] = v
				}
				events := sessionEvents(t, s, a.id)
				res := s.Do(t, c.query, vars)
				if n.field == "" {
					require.Empty(t, res.Errors)
					var got any
					require.NoError(t, json.Unmarshal(res.Data, &got))
					assert.Equal(t, c.want, got)
					return
				}
				require.Len(t, res.Errors, 1, "data: %s", res.Data)
				assert.Equal(t, "BAD_USER_INPUT", res.Errors[0].Code())
				assert.Equal(t, n.field, res.Errors[0].Extensions["field"])
				assert.Equal(t, n.message, res.Errors[0].Message)
				assert.Equal(t, events, sessionEvents(t, s, a.id), "a refused call writes nothing")
			})
		}
	}
}

func sessionEvents(t *testing.T, s *apitest.Server, id string) int {
	t.Helper()
	return s.Client.Event.Query().Where(event.SessionID(uuid.MustParse(id))).CountX(access.System(context.Background()))
}
