package graph_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

func TestEntityTypesAndUpsert(t *testing.T) {
	s := apitest.New(t)
	var kitchen struct {
		EntityTypes []struct {
			Name, TableName, LabelTemplate string
			FkFields                       []struct{ Field, TargetType string } `json:"fkFields"`
		} `json:"entityTypes"`
	}
	s.MustDo(t, `{ entityTypes(domain: "kitchen") { name tableName labelTemplate fkFields { field targetType } } }`, nil, &kitchen)
	names := []string{}
	for _, et := range kitchen.EntityTypes {
		names = append(names, et.Name)
		if et.Name == "meal_plan" {
			assert.Equal(t, "{date} {meal_type}", et.LabelTemplate)
			assert.Equal(t, "recipe_id", et.FkFields[0].Field)
		}
	}
	assert.Equal(t, []string{"ingredient", "inv", "meal_plan", "recipe", "recipe_ingredient", "task"}, names)

	// A new type takes effect at once for this replica's registry writes.
	s.MustDo(t, `mutation { upsertEntityType(input: {domain: "kitchen", name: "shopping_item", table: "shopping_items",
		labelField: "title", fkFields: [{field: "ingredient_id", targetType: "ingredient", table: "ingredients", nameColumn: "name"}]}) { entityType { name } } }`, nil, nil)
	a := newAgent(t, s, "shopping")
	a.turn("what do I need to buy?")
	got := a.read("shopping_items", map[string]any{"id": newUUID(), "title": "Basil", "ingredient_id": newUUID()})
	assert.Equal(t, []map[string]any{{"id": "shopping_item_1", "title": "Basil", "ingredient_id": "ingredient_1"}}, got.RecordRead.Records)

	for _, bad := range []string{
		`mutation { upsertEntityType(input: {domain: "kitchen", name: "gen_thing", table: "things"}) { entityType { name } } }`,
		`mutation { upsertEntityType(input: {domain: "kitchen", name: "thing_2", table: "things"}) { entityType { name } } }`,
		`mutation { upsertEntityType(input: {domain: "kitchen", name: "thing", table: "things", fkFields: [{field: "x_id", targetType: "nope", table: "x", nameColumn: "name"}]}) { entityType { name } } }`,
	} {
		res := s.Do(t, bad, nil)
		require.Len(t, res.Errors, 1, bad)
		assert.Equal(t, "BAD_USER_INPUT", res.Errors[0].Code())
	}
}

// A table holds one entity type: a new type on a table another type of the
// domain maps is a CONFLICT naming that type (the unique (domain, table)
// index failed unmapped, as INTERNAL), and the domain stays as it was.
// Redefining the type that holds the table, by its name, still works.
func TestANewTypeOnAMappedTableConflicts(t *testing.T) {
	s := apitest.New(t)
	before := dataDigest(t, s)
	for _, table := range []string{"tasks", "recipes"} {
		res := s.Do(t, `mutation($t: String!) { upsertEntityType(input: {domain: "kitchen", name: "chore", table: $t}) { entityType { name } } }`,
			map[string]any{"t": table})
		require.Len(t, res.Errors, 1, table)
		assert.Equal(t, "CONFLICT", res.Errors[0].Code())
		assert.Equal(t, "table", res.Errors[0].Extensions["field"])
	}
	res := s.Do(t, `mutation { upsertEntityType(input: {domain: "kitchen", name: "chore", table: "tasks"}) { entityType { name } } }`, nil)
	assert.Equal(t, `table "tasks" already holds entity type "task" of domain "kitchen", and a table holds one entity type: redefine that type (same name), or give this one its own table`,
		res.Errors[0].Message)
	assert.Equal(t, before, dataDigest(t, s))

	var out struct {
		UpsertEntityType struct {
			EntityType struct{ Name, LabelField string }
		} `json:"upsertEntityType"`
	}
	s.MustDo(t, `mutation { upsertEntityType(input: {domain: "kitchen", name: "task", table: "tasks", labelField: "title"}) { entityType { name labelField } } }`, nil, &out)
	assert.Equal(t, "title", out.UpsertEntityType.EntityType.LabelField)
}
