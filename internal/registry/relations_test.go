package registry_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/registry"
)

// Lazy FK registration: "what's in my meal plan?" — the meal
// plan's recipe is not in the registry, so it is registered as linked and
// queued for enrichment; after enrichment the label appears next to the FK.
func TestFKLazyRegistrationAndEnrichment(t *testing.T) {
	d := kitchen(t)
	mealPlan := typeOf(t, d, "meal_plan")
	r := registry.New(1, nil, nil)

	out, err := r.Read(d, mealPlan, []map[string]any{
		{"id": mondayLunchID, "date": "2026-01-12", "meal_type": "lunch", "recipe_id": butterChickenID},
	}, registry.ActionRead, intp(1))
	require.NoError(t, err)

	assert.Equal(t, []map[string]any{
		{"id": "meal_plan_1", "date": "2026-01-12", "meal_type": "lunch", "recipe_id": "recipe_1"},
	}, out, "no _recipe_id_label while the recipe's name is unknown")
	assert.Equal(t, &registry.Entry{
		Ref: "meal_plan_1", EntityType: "meal_plan", EntityID: idp(mondayLunchID), Label: "2026-01-12 lunch",
		Action: "read", TurnCreated: 1, TurnLastReferenced: 1, SourceStep: intp(1),
	}, entry(t, r, "meal_plan_1"))
	linked := entry(t, r, "recipe_1")
	assert.Equal(t, &registry.Entry{
		Ref: "recipe_1", EntityType: "recipe", EntityID: idp(butterChickenID),
		Action: "linked", TurnCreated: 1, TurnLastReferenced: 1, SourceStep: intp(1),
		EnrichTable: strp("recipes"), EnrichNameColumn: strp("name"),
	}, linked)
	assert.True(t, linked.Queued())
	assert.Equal(t, map[string]int{"meal_plan": 1, "recipe": 1}, r.Counters)
	assert.Equal(t, []string{"meal_plan_1", "recipe_1"}, refsOf(r.Changed()))

	// The runtime looks the name up: SELECT id, name FROM recipes WHERE id IN (...).
	enriched, err := r.ApplyEnrichment([]registry.Enrichment{{Ref: "recipe_1", Label: "Butter Chicken"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"recipe_1"}, refsOf(enriched))
	assert.Equal(t, &registry.Entry{
		Ref: "recipe_1", EntityType: "recipe", EntityID: idp(butterChickenID), Label: "Butter Chicken",
		Action: "linked", TurnCreated: 1, TurnLastReferenced: 1, SourceStep: intp(1),
	}, linked)
	assert.False(t, linked.Queued())

	// Turn 2: another meal plan with the same recipe gets the label.
	r.Turn = 2
	out, err = r.Read(d, mealPlan, []map[string]any{
		{"id": tuesdayDinnerID, "date": "2026-01-13", "meal_type": "dinner", "recipe_id": butterChickenID},
	}, registry.ActionRead, nil)
	require.NoError(t, err)
	assert.Equal(t, []map[string]any{
		{"id": "meal_plan_2", "date": "2026-01-13", "meal_type": "dinner", "recipe_id": "recipe_1", "_recipe_id_label": "Butter Chicken"},
	}, out)
	assert.Equal(t, 1, linked.TurnLastReferenced, "an FK to a known entity does not touch it")
	assert.Equal(t, map[string]int{"meal_plan": 2, "recipe": 1}, r.Counters)
	assertNoUUIDs(t, out)
}

// Reading the linked entity itself later makes it a read with its own label.
func TestLinkedEntityReadLaterBecomesRead(t *testing.T) {
	d := kitchen(t)
	r := registry.New(1, nil, nil)
	_, err := r.Read(d, typeOf(t, d, "meal_plan"), []map[string]any{
		{"id": mondayLunchID, "date": "2026-01-12", "meal_type": "lunch", "recipe_id": butterChickenID},
	}, registry.ActionRead, nil)
	require.NoError(t, err)

	r.Turn = 2
	out, err := r.Read(d, typeOf(t, d, "recipe"), []map[string]any{
		{"id": butterChickenID, "name": "Butter Chicken", "instructions": "Marinate, grill, simmer."},
	}, registry.ActionRead, nil)
	require.NoError(t, err)
	assert.Equal(t, []map[string]any{
		{"id": "recipe_1", "name": "Butter Chicken", "instructions": "Marinate, grill, simmer."},
	}, out)
	assert.Equal(t, &registry.Entry{
		Ref: "recipe_1", EntityType: "recipe", EntityID: idp(butterChickenID), Label: "Butter Chicken",
		Action: "read", DetailLevel: registry.DetailFull, FullTurn: intp(2), TurnCreated: 1, TurnLastReferenced: 2,
	}, entry(t, r, "recipe_1"), "the label took it out of the enrichment queue")
}

// FK values that are missing, lists, or not UUIDs.
func TestReadFKShapes(t *testing.T) {
	d := kitchen(t)
	r := registry.New(1, nil, nil)
	out, err := r.Read(d, typeOf(t, d, "meal_plan"), []map[string]any{
		{"id": mondayLunchID, "date": "2026-01-12", "meal_type": "lunch", "recipe_id": nil},
		{"id": tuesdayDinnerID, "date": "2026-01-13", "meal_type": "dinner", "recipe_id": []any{butterChickenID, pastaID}},
	}, registry.ActionRead, nil)
	require.NoError(t, err)
	assert.Equal(t, []map[string]any{
		{"id": "meal_plan_1", "date": "2026-01-12", "meal_type": "lunch", "recipe_id": nil},
		{"id": "meal_plan_2", "date": "2026-01-13", "meal_type": "dinner", "recipe_id": []any{"recipe_1", "recipe_2"}},
	}, out)
	assert.Equal(t, "linked", entry(t, r, "recipe_2").Action)

	out, err = r.Read(d, typeOf(t, d, "meal_plan"), []map[string]any{
		{"id": mondayLunchID, "recipe_id": "leftovers"},
	}, registry.ActionRead, nil)
	require.NoError(t, err)
	assert.Equal(t, []map[string]any{{"id": "meal_plan_1", "recipe_id": "leftovers"}}, out, "a value that is not a UUID passes through")
}

// A read translates nested relations too (recipe_ingredients inside a
// recipe read). The children get refs of
// their own, their FK to the parent carries the parent's label, and the
// ingredients they point at are lazily linked.
func TestReadNestedRelations(t *testing.T) {
	d := kitchen(t)
	r := registry.New(1, nil, nil)

	out, err := r.Read(d, typeOf(t, d, "recipe"), []map[string]any{{
		"id": thaiCurryID, "name": "Thai Curry", "instructions": "Simmer everything.",
		"recipe_ingredients": []any{
			map[string]any{"id": coconutMilkRowID, "recipe_id": thaiCurryID, "ingredient_id": coconutMilkID, "name": "coconut milk", "quantity": "1 can"},
			map[string]any{"id": lemongrassRowID, "recipe_id": thaiCurryID, "ingredient_id": lemongrassID, "name": "lemongrass", "quantity": "2 stalks"},
		},
	}}, registry.ActionRead, intp(2))
	require.NoError(t, err)

	assert.Equal(t, []map[string]any{{
		"id": "recipe_1", "name": "Thai Curry", "instructions": "Simmer everything.",
		"recipe_ingredients": []any{
			map[string]any{"id": "recipe_ingredient_1", "recipe_id": "recipe_1", "_recipe_id_label": "Thai Curry", "ingredient_id": "ingredient_1", "name": "coconut milk", "quantity": "1 can"},
			map[string]any{"id": "recipe_ingredient_2", "recipe_id": "recipe_1", "_recipe_id_label": "Thai Curry", "ingredient_id": "ingredient_2", "name": "lemongrass", "quantity": "2 stalks"},
		},
	}}, out)
	assertNoUUIDs(t, out)

	assert.Equal(t, &registry.Entry{
		Ref: "recipe_ingredient_1", EntityType: "recipe_ingredient", EntityID: idp(coconutMilkRowID), Label: "coconut milk",
		Action: "read", TurnCreated: 1, TurnLastReferenced: 1, SourceStep: intp(2),
	}, entry(t, r, "recipe_ingredient_1"))
	assert.Equal(t, &registry.Entry{
		Ref: "ingredient_2", EntityType: "ingredient", EntityID: idp(lemongrassID),
		Action: "linked", TurnCreated: 1, TurnLastReferenced: 1, SourceStep: intp(2),
		EnrichTable: strp("ingredients"), EnrichNameColumn: strp("name"),
	}, entry(t, r, "ingredient_2"))
	assert.Equal(t, map[string]int{"recipe": 1, "recipe_ingredient": 2, "ingredient": 2}, r.Counters)
	assert.Equal(t, []string{"recipe_1", "recipe_ingredient_1", "ingredient_1", "recipe_ingredient_2", "ingredient_2"}, refsOf(r.Changed()))

	// The inventory points at the same coconut milk: its ref is reused.
	out, err = r.Read(d, typeOf(t, d, "inv"), []map[string]any{
		{"id": riceInvID, "name": "coconut milk", "ingredient_id": coconutMilkID, "quantity": 2},
	}, registry.ActionRead, nil)
	require.NoError(t, err)
	assert.Equal(t, []map[string]any{{"id": "inv_1", "name": "coconut milk", "ingredient_id": "ingredient_1", "quantity": 2}}, out)
	assert.Equal(t, map[string]int{"recipe": 1, "recipe_ingredient": 2, "ingredient": 2, "inv": 1}, r.Counters)
}

// A nested value that is not a list of records is only scrubbed.
func TestReadNestedRelationOfAnotherShape(t *testing.T) {
	d := kitchen(t)
	r := registry.New(1, nil, nil)
	out, err := r.Read(d, typeOf(t, d, "recipe"), []map[string]any{
		{"id": thaiCurryID, "name": "Thai Curry", "recipe_ingredients": "see " + strangerID},
		{"id": pastaID, "name": "Pasta", "recipe_ingredients": []any{"flour", nil}},
	}, registry.ActionRead, nil)
	require.NoError(t, err)
	assert.Equal(t, []map[string]any{
		{"id": "recipe_1", "name": "Thai Curry", "recipe_ingredients": "see [unregistered id]"},
		{"id": "recipe_2", "name": "Pasta", "recipe_ingredients": []any{"flour", nil}},
	}, out)
}
