package registry_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apperr"
	"sessiongraph/internal/registry"
)

// afterTurn1 is the kitchen session after turn 1's read: recipe_1 is
// Thai Curry and recipe_2 is Pasta. It returns the entries as the engine
// would load them in a later turn.
func afterTurn1(t *testing.T, d *registry.Domain) (map[string]int, []*registry.Entry) {
	t.Helper()
	r := registry.New(1, nil, nil)
	_, err := r.Read(d, typeOf(t, d, "recipe"), []map[string]any{
		{"id": thaiCurryID, "name": "Thai Curry"},
		{"id": pastaID, "name": "Pasta"},
	}, registry.ActionRead, nil)
	require.NoError(t, err)
	return r.Counters, r.Changed()
}

// The cross-turn reference flow. Turn 2: "delete all of them" — Act
// calls db_delete with filter id in ["recipe_1", "recipe_2"], and the system
// translates the filter to the real UUIDs.
func TestTranslateFiltersForACrossTurnDelete(t *testing.T) {
	d := kitchen(t)
	counters, entries := afterTurn1(t, d)
	r := registry.New(2, counters, nil, entries...)

	got, err := r.TranslateFilters(typeOf(t, d, "recipe"), []registry.Filter{
		{Field: "id", Op: "in", Value: []any{"recipe_1", "recipe_2"}},
	})
	require.NoError(t, err)
	assert.Equal(t, registry.TranslatedFilters{
		Filters: []registry.Filter{{Field: "id", Op: "in", Value: []any{thaiCurryID, pastaID}}},
	}, got)
	assert.Empty(t, r.Changed(), "translating a filter records nothing")
}

func TestTranslateFiltersOfSingleValuesFKsAndOtherFields(t *testing.T) {
	d := kitchen(t)
	counters, entries := afterTurn1(t, d)
	r := registry.New(2, counters, nil, entries...)

	got, err := r.TranslateFilters(typeOf(t, d, "recipe"), []registry.Filter{
		{Field: "id", Op: "=", Value: "recipe_2"},
		{Field: "name", Op: "=", Value: "recipe_1"}, // not an id: left as written
		{Field: "cuisine", Op: "in", Value: []any{"thai", "italian"}},
	})
	require.NoError(t, err)
	assert.Equal(t, registry.TranslatedFilters{Filters: []registry.Filter{
		{Field: "id", Op: "=", Value: pastaID},
		{Field: "name", Op: "=", Value: "recipe_1"},
		{Field: "cuisine", Op: "in", Value: []any{"thai", "italian"}},
	}}, got)

	got, err = r.TranslateFilters(typeOf(t, d, "meal_plan"), []registry.Filter{
		{Field: "recipe_id", Op: "=", Value: "recipe_1"},
		{Field: "date", Op: ">=", Value: "2026-01-12"},
	})
	require.NoError(t, err)
	assert.Equal(t, registry.TranslatedFilters{Filters: []registry.Filter{
		{Field: "recipe_id", Op: "=", Value: thaiCurryID},
		{Field: "date", Op: ">=", Value: "2026-01-12"},
	}}, got)
}

// UUIDs pass through (normalized to lower case); a nil filter list is empty.
func TestTranslateFiltersPassesUUIDsThrough(t *testing.T) {
	d := kitchen(t)
	r := registry.New(2, nil, nil)
	got, err := r.TranslateFilters(typeOf(t, d, "recipe"), []registry.Filter{
		{Field: "id", Op: "in", Value: []any{strangerID, "A508000D-9B55-40F0-8886-DBDD88BD2DE2"}},
	})
	require.NoError(t, err)
	assert.Equal(t, registry.TranslatedFilters{
		Filters: []registry.Filter{{Field: "id", Op: "in", Value: []any{strangerID, thaiCurryID}}},
	}, got)

	got, err = r.TranslateFilters(typeOf(t, d, "recipe"), nil)
	require.NoError(t, err)
	assert.Equal(t, registry.TranslatedFilters{}, got)
}

func TestTranslateFiltersRejectsUnknownRefsAndText(t *testing.T) {
	d := kitchen(t)
	counters, entries := afterTurn1(t, d)
	r := registry.New(2, counters, nil, entries...)
	recipe := typeOf(t, d, "recipe")

	_, err := r.TranslateFilters(recipe, []registry.Filter{{Field: "id", Op: "in", Value: []any{"recipe_1", "recipe_9"}}})
	re := requireCode(t, err, apperr.RefNotFound)
	assert.Equal(t, `this session has no ref "recipe_9"`, re.Message)

	_, err = r.TranslateFilters(recipe, []registry.Filter{{Field: "id", Op: "=", Value: "Thai Curry"}})
	re = requireCode(t, err, apperr.BadUserInput)
	assert.Equal(t, `filters[0].value is "Thai Curry", which is neither a ref (recipe_1) nor a UUID`, re.Message)

	_, err = r.TranslateFilters(typeOf(t, d, "meal_plan"), []registry.Filter{
		{Field: "date", Op: "=", Value: "2026-01-12"},
		{Field: "recipe_id", Op: "in", Value: []any{"recipe_1", "butter chicken"}},
	})
	re = requireCode(t, err, apperr.BadUserInput)
	assert.Equal(t, `filters[1].value[1] is "butter chicken", which is neither a ref (recipe_1) nor a UUID`, re.Message)
}

// translate_payload: refs in the id, FK and nested fields of a record about
// to be written become UUIDs; other fields are left as written.
func TestTranslatePayloadOfAnUpdate(t *testing.T) {
	d := kitchen(t)
	r := registry.New(1, nil, nil)
	_, err := r.Read(d, typeOf(t, d, "recipe"), []map[string]any{{
		"id": thaiCurryID, "name": "Thai Curry",
		"recipe_ingredients": []any{map[string]any{"id": coconutMilkRowID, "ingredient_id": coconutMilkID, "name": "coconut milk"}},
	}}, registry.ActionRead, nil)
	require.NoError(t, err)
	require.Equal(t, map[string]int{"recipe": 1, "recipe_ingredient": 1, "ingredient": 1}, r.Counters)

	data := map[string]any{
		"id": "recipe_1", "name": "Thai Curry (mild)", "notes": "like recipe_1 but mild",
		"recipe_ingredients": []any{
			map[string]any{"id": "recipe_ingredient_1", "recipe_id": "recipe_1", "ingredient_id": "ingredient_1", "quantity": "half a can"},
			map[string]any{"recipe_id": "recipe_1", "ingredient_id": lemongrassID, "quantity": "1 stalk"},
			"not a record",
		},
	}
	got, err := r.TranslatePayload(d, typeOf(t, d, "recipe"), data)
	require.NoError(t, err)
	assert.Equal(t, registry.TranslatedPayload{Data: map[string]any{
		"id": thaiCurryID, "name": "Thai Curry (mild)", "notes": "like recipe_1 but mild",
		"recipe_ingredients": []any{
			map[string]any{"id": coconutMilkRowID, "recipe_id": thaiCurryID, "ingredient_id": coconutMilkID, "quantity": "half a can"},
			map[string]any{"recipe_id": thaiCurryID, "ingredient_id": lemongrassID, "quantity": "1 stalk"},
			"not a record",
		},
	}}, got)
	assert.Equal(t, "recipe_1", data["id"], "the payload given is not changed")
}

func TestTranslatePayloadErrorsNameTheField(t *testing.T) {
	d := kitchen(t)
	r := registry.New(1, nil, nil)

	_, err := r.TranslatePayload(d, typeOf(t, d, "inv"), map[string]any{"name": "rice", "ingredient_id": "ingredient_7"})
	re := requireCode(t, err, apperr.RefNotFound)
	assert.Equal(t, `this session has no ref "ingredient_7"`, re.Message)

	_, err = r.TranslatePayload(d, typeOf(t, d, "recipe"), map[string]any{
		"name": "Pasta", "recipe_ingredients": []any{map[string]any{"ingredient_id": "flour"}},
	})
	re = requireCode(t, err, apperr.BadUserInput)
	assert.Equal(t, `data.recipe_ingredients[0].ingredient_id is "flour", which is neither a ref (recipe_1) nor a UUID`, re.Message)
}
