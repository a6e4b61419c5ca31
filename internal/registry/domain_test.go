package registry_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent/schema/schematype"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/registry"
)

func TestKitchenDomainIndexesTypesByNameAndTable(t *testing.T) {
	d := kitchen(t)
	for table, name := range map[string]string{
		"recipes": "recipe", "recipe_ingredients": "recipe_ingredient", "ingredients": "ingredient",
		"inventory": "inv", "meal_plans": "meal_plan", "tasks": "task",
	} {
		et, err := d.TypeOfTable(table)
		require.NoError(t, err, table)
		assert.Equal(t, name, et.Name)
		assert.Equal(t, "id", et.IDField, "the id field defaults to id")
		byName, err := d.Type(name)
		require.NoError(t, err)
		assert.Same(t, et, byName)
	}
}

func TestUnknownTableOrTypeIsUnknownEntityType(t *testing.T) {
	d := kitchen(t)

	_, err := d.TypeOfTable("recipe")
	re := requireCode(t, err, apperr.UnknownEntityType)
	assert.Equal(t, `domain "kitchen" has no table "recipe"; it knows recipes, recipe_ingredients, ingredients, inventory, meal_plans, tasks`, re.Message)

	_, err = d.Type("recipes")
	re = requireCode(t, err, apperr.UnknownEntityType)
	assert.Equal(t, `domain "kitchen" has no entity type "recipes"; it knows recipe, recipe_ingredient, ingredient, inv, meal_plan, task`, re.Message)
}

func TestNewDomainRejectsAmbiguousTypes(t *testing.T) {
	for name, types := range map[string][]registry.EntityType{
		"gen_ prefix":     {{Name: "gen_recipe", Table: "recipes"}},
		"number segment":  {{Name: "recipe_2", Table: "recipes"}},
		"upper case":      {{Name: "Recipe", Table: "recipes"}},
		"no table":        {{Name: "recipe"}},
		"name used twice": {{Name: "recipe", Table: "recipes"}, {Name: "recipe", Table: "recipes_v2"}},
		"table used twice": {
			{Name: "recipe", Table: "recipes"}, {Name: "dish", Table: "recipes"},
		},
	} {
		_, err := registry.NewDomain("kitchen", types)
		assert.Error(t, err, name)
	}
}

func TestCheckRejectsDanglingRelations(t *testing.T) {
	d, err := registry.NewDomain("kitchen", []registry.EntityType{{
		Name: "meal_plan", Table: "meal_plans",
		FKFields: []schematype.FKField{{Field: "recipe_id", TargetType: "recipe", Table: "recipes", NameColumn: "name"}},
	}})
	require.NoError(t, err)
	assert.EqualError(t, d.Check(), `entity type "meal_plan": FK field "recipe_id" needs a field, a known target type (got "recipe"), a table and a name column`)

	d, err = registry.NewDomain("kitchen", []registry.EntityType{{
		Name: "recipe", Table: "recipes",
		NestedRelations: []schematype.NestedRelation{{Field: "recipe_ingredients", EntityType: "recipe_ingredient"}},
	}})
	require.NoError(t, err)
	assert.EqualError(t, d.Check(), `entity type "recipe": nested relation "recipe_ingredients" needs a field and a known entity type (got "recipe_ingredient")`)
}

// A meal plan is labelled "Mon Dinner" from its date and meal_type: the label
// template fills each placeholder from the record.
func TestLabelFromTemplateOrField(t *testing.T) {
	d := kitchen(t)
	mealPlan, recipe, task := typeOf(t, d, "meal_plan"), typeOf(t, d, "recipe"), typeOf(t, d, "task")

	assert.Equal(t, "2026-01-12 lunch", mealPlan.Label(map[string]any{"date": "2026-01-12", "meal_type": "lunch", "recipe_id": butterChickenID}))
	assert.Equal(t, "lunch", mealPlan.Label(map[string]any{"meal_type": "lunch"}), "a missing field leaves no stray space")
	assert.Equal(t, "2026-01-12", mealPlan.Label(map[string]any{"date": "2026-01-12", "meal_type": nil}))
	assert.Equal(t, "", mealPlan.Label(map[string]any{}))

	assert.Equal(t, "Thai Curry", recipe.Label(map[string]any{"id": thaiCurryID, "name": "Thai Curry"}))
	assert.Equal(t, "", recipe.Label(map[string]any{"id": thaiCurryID}))
	assert.Equal(t, "", recipe.Label(map[string]any{"name": 42}), "a label field that is not text gives no label")
	assert.Equal(t, "Buy cod", task.Label(map[string]any{"title": "Buy cod", "name": "ignored"}))
}

// Detail tracking: a record with all detail fields is a full
// read, one without is a summary, and types without detail fields do not
// track detail.
func TestDetailLevelFromRecordShape(t *testing.T) {
	d := kitchen(t)
	recipe, inv := typeOf(t, d, "recipe"), typeOf(t, d, "inv")

	assert.Equal(t, registry.DetailFull, recipe.DetailLevel(map[string]any{"name": "Thai Curry", "instructions": "Simmer."}))
	assert.Equal(t, registry.DetailFull, recipe.DetailLevel(map[string]any{"instructions": ""}), "an empty text is still the field")
	assert.Equal(t, registry.DetailSummary, recipe.DetailLevel(map[string]any{"name": "Thai Curry"}))
	assert.Equal(t, registry.DetailSummary, recipe.DetailLevel(map[string]any{"name": "Thai Curry", "instructions": nil}))
	assert.Equal(t, "", inv.DetailLevel(map[string]any{"name": "rice"}))
	assert.Equal(t, "FULL", registry.DetailFull)
	assert.Equal(t, "SUMMARY", registry.DetailSummary)
}

// A label's rendering is bounded by its template, whatever the record: 16
// placeholders of a 1 MB field render one label just past MaxLabelBytes
// (16 MB were built, then cut, for every record of a read, while the
// session was locked), and the text it does render is what the template
// says, with white space folded.
func TestALabelTemplateRendersInTimeBoundedByTheTemplate(t *testing.T) {
	big := strings.Repeat("word ", 200_000)
	et := registry.EntityType{Name: "plan", Table: "plans", LabelTemplate: strings.Repeat("{name}", 16)}
	label := et.Label(map[string]any{"name": big})
	assert.LessOrEqual(t, len(label), registry.MaxLabelBytes+8)
	assert.Greater(t, len(label), registry.MaxLabelBytes)
	assert.True(t, strings.HasPrefix(big, label), "the label is the rendering's start")

	spaces := registry.EntityType{Name: "plan", Table: "plans", LabelTemplate: "{a}{b}x"}
	assert.Equal(t, "x", spaces.Label(map[string]any{"a": strings.Repeat(" ", 1<<20), "b": "   "}))

	meal := registry.EntityType{Name: "meal_plan", Table: "meal_plans", LabelTemplate: " {date}  {meal_type} {n}{missing} {obj} {x"}
	assert.Equal(t, "2026-11-25 dinner 3 {x", meal.Label(map[string]any{
		"date": "2026-11-25", "meal_type": "dinner", "n": json.Number("3"), "obj": map[string]any{"a": 1},
	}))
	assert.Equal(t, 3, registry.Placeholders("{a}{b} {c} {} {d e}"))
}
