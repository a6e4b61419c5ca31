package domains_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/domains"
	"sessiongraph/ent/schema/schematype"
)

func TestKitchenDomainIsTheSeedsDomain(t *testing.T) {
	d, err := domains.Kitchen()
	require.NoError(t, err)
	assert.Equal(t, "kitchen", d.Name)
	names := map[string]string{}
	for _, et := range d.Types {
		names[et.Name] = et.Table
	}
	assert.Equal(t, map[string]string{
		"recipe": "recipes", "recipe_ingredient": "recipe_ingredients", "ingredient": "ingredients",
		"inv": "inventory", "meal_plan": "meal_plans", "task": "tasks",
	}, names)

	mp, err := d.TypeOfTable("meal_plans")
	require.NoError(t, err)
	assert.Equal(t, "2026-01-12 lunch", mp.Label(map[string]any{"date": "2026-01-12", "meal_type": "lunch"}))
	assert.Equal(t, []schematype.FKField{{Field: "recipe_id", TargetType: "recipe", Table: "recipes", NameColumn: "name"}}, mp.FKFields)

	recipe, err := d.Type("recipe")
	require.NoError(t, err)
	assert.Equal(t, "id", recipe.IDField)
	assert.Equal(t, []schematype.NestedRelation{{Field: "recipe_ingredients", EntityType: "recipe_ingredient"}}, recipe.NestedRelations)
	assert.Equal(t, []string{"instructions"}, recipe.DetailFields)
	assert.NotEmpty(t, recipe.DataLegend)
}

func TestParseRejectsBrokenDomains(t *testing.T) {
	for name, src := range map[string]string{
		"no domain":         "entityTypes: [{name: recipe, table: recipes}]",
		"unknown key":       "domain: d\nentityTypes: [{name: recipe, table: recipes, lable: name}]",
		"ambiguous name":    "domain: d\nentityTypes: [{name: gen_recipe, table: recipes}]",
		"name with number":  "domain: d\nentityTypes: [{name: recipe_2, table: recipes}]",
		"no table":          "domain: d\nentityTypes: [{name: recipe}]",
		"twice":             "domain: d\nentityTypes: [{name: recipe, table: a}, {name: recipe, table: b}]",
		"unknown fk target": "domain: d\nentityTypes: [{name: plan, table: plans, fkFields: [{field: recipe_id, targetType: recipe, table: recipes, nameColumn: name}]}]",
		"unknown nested":    "domain: d\nentityTypes: [{name: recipe, table: recipes, nestedRelations: [{field: items, entityType: item}]}]",
	} {
		_, err := domains.Parse([]byte(src))
		assert.Error(t, err, name)
	}
}
