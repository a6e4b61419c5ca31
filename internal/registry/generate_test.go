package registry_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apperr"
	"sessiongraph/internal/registry"
)

func simpleCod() map[string]any {
	return map[string]any{
		"name": "Simple Cod", "servings": 2,
		"ingredients":  []any{"cod", "lemon"},
		"instructions": "Bake at 200C for 12 minutes.",
	}
}

func simpleCodWithFeta() map[string]any {
	return map[string]any{
		"name": "Simple Cod with Feta", "servings": 2,
		"ingredients":  []any{"cod", "lemon", "feta"},
		"instructions": "Bake at 200C for 12 minutes; crumble the feta on top.",
	}
}

// The generate flow, and the lifecycle of pending artifacts.
// Turn 2: "create a simple cod recipe" — gen_recipe_1 is pending, readable
// from its artifact, and nothing may point at it yet. Turn 3: "add feta",
// then "save it" — the same ref is promoted to the new entity and records
// that point at it translate to its UUID.
func TestGenerateThenSave(t *testing.T) {
	d := kitchen(t)
	recipe, recipeIngredient := typeOf(t, d, "recipe"), typeOf(t, d, "recipe_ingredient")
	counters, entries := afterTurn1(t, d)
	r := registry.New(2, counters, nil, entries...)

	// Turn 2, step 1: the generate step.
	gen := r.Generate(recipe, simpleCod(), "", intp(1))
	assert.Equal(t, &registry.Entry{
		Ref: "gen_recipe_1", EntityType: "recipe", Label: "Simple Cod", Action: "generated",
		TurnCreated: 2, TurnLastReferenced: 2, SourceStep: intp(1),
		Artifact: &registry.Artifact{
			EntityType: "recipe", Label: "Simple Cod", Content: simpleCod(),
			Status: registry.ArtifactPending, Revision: 1, CreatedTurn: 2, SourceStep: intp(1),
		},
	}, gen)
	assert.True(t, gen.Generated())
	assert.Equal(t, map[string]int{"recipe": 1}, r.GenCounters)
	assert.Equal(t, map[string]int{"recipe": 2}, r.Counters, "a generated entity takes no database number")
	assert.Equal(t, []string{"gen_recipe_1"}, refsOf(r.Changed()))

	// Reading gen_recipe_1 is answered from its artifact, in db_read's shape.
	records, fromDatabase, err := r.ReadRefs(d, []string{"gen_recipe_1", "recipe_1"})
	require.NoError(t, err)
	assert.Equal(t, []map[string]any{{
		"id": "gen_recipe_1", "name": "Simple Cod", "servings": 2,
		"ingredients":  []any{"cod", "lemon"},
		"instructions": "Bake at 200C for 12 minutes.",
	}}, records)
	assert.Equal(t, []string{"recipe_1"}, fromDatabase, "recipe_1's data lives in the database")
	assert.Equal(t, simpleCod(), gen.Artifact.Content, "the artifact did not get an id")

	// A db_read filter on it is rerouted rather than sent to the database;
	// the id filter stays as "in []", which matches no row.
	got, err := r.TranslateFilters(recipe, []registry.Filter{{Field: "id", Op: "=", Value: "gen_recipe_1"}})
	require.NoError(t, err)
	assert.Equal(t, registry.TranslatedFilters{
		Filters: []registry.Filter{{Field: "id", Op: "in", Value: []any{}}},
		Pending: []string{"gen_recipe_1"},
	}, got)
	got, err = r.TranslateFilters(recipe, []registry.Filter{{Field: "id", Op: "in", Value: []any{"recipe_1", "gen_recipe_1"}}})
	require.NoError(t, err)
	assert.Equal(t, registry.TranslatedFilters{
		Filters: []registry.Filter{{Field: "id", Op: "in", Value: []any{thaiCurryID}}},
		Pending: []string{"gen_recipe_1"},
	}, got)

	// Nothing can point at it before it is saved.
	ingredientRow := map[string]any{"recipe_id": "gen_recipe_1", "ingredient_id": codID, "name": "cod", "quantity": "2 fillets"}
	_, err = r.TranslatePayload(d, recipeIngredient, ingredientRow)
	re := requireCode(t, err, apperr.RefPending)
	assert.Equal(t, "data.recipe_id is gen_recipe_1, which is generated but not saved yet: save it (recordCreated) before records that point at it", re.Message)

	// Turn 3: "add feta".
	r = registry.New(3, r.Counters, r.GenCounters, append(entries, gen)...)
	updated, err := r.UpdateArtifact(recipe, "gen_recipe_1", simpleCodWithFeta(), "")
	require.NoError(t, err)
	assert.Same(t, gen, updated)
	assert.Equal(t, "Simple Cod with Feta", gen.Label)
	assert.Equal(t, 3, gen.TurnLastReferenced)
	assert.Equal(t, &registry.Artifact{
		EntityType: "recipe", Label: "Simple Cod with Feta", Content: simpleCodWithFeta(),
		Status: registry.ArtifactPending, Revision: 2, CreatedTurn: 2, SourceStep: intp(1),
	}, gen.Artifact)

	// "save it": Act writes gen_recipe_1's content.
	payload, err := r.TranslatePayload(d, recipe, map[string]any{"id": "gen_recipe_1", "name": "Simple Cod with Feta", "servings": 2})
	require.NoError(t, err)
	assert.Equal(t, registry.TranslatedPayload{
		Data:  map[string]any{"name": "Simple Cod with Feta", "servings": 2},
		Saves: new("gen_recipe_1"),
	}, payload, "the database assigns the id")

	// The database returns the new UUID; type and label find the artifact.
	saved, err := r.Create(recipe, uuid.MustParse(simpleCodID), "Simple Cod with Feta", "", intp(2))
	require.NoError(t, err)
	assert.Same(t, gen, saved)
	assert.Equal(t, &registry.Entry{
		Ref: "gen_recipe_1", EntityType: "recipe", EntityID: idp(simpleCodID), Label: "Simple Cod with Feta",
		Action: "created", TurnCreated: 2, TurnLastReferenced: 3, SourceStep: intp(1), TurnPromoted: intp(3),
		Artifact: &registry.Artifact{
			EntityType: "recipe", Label: "Simple Cod with Feta", Content: simpleCodWithFeta(),
			Status: registry.ArtifactPromoted, Revision: 2, CreatedTurn: 2, PromotedTurn: intp(3), SourceStep: intp(1),
		},
	}, saved)
	assert.Equal(t, map[string]int{"recipe": 2}, r.Counters, "promotion keeps the gen ref: no recipe_3")
	byID, ok := r.ByEntityID(uuid.MustParse(simpleCodID))
	require.True(t, ok)
	assert.Equal(t, "gen_recipe_1", byID.Ref)

	// Linked records can now point at it.
	linked, err := r.TranslatePayload(d, recipeIngredient, ingredientRow)
	require.NoError(t, err)
	assert.Equal(t, registry.TranslatedPayload{Data: map[string]any{
		"recipe_id": simpleCodID, "ingredient_id": codID, "name": "cod", "quantity": "2 fillets",
	}}, linked)
	got, err = r.TranslateFilters(recipe, []registry.Filter{{Field: "id", Op: "=", Value: "gen_recipe_1"}})
	require.NoError(t, err)
	assert.Equal(t, registry.TranslatedFilters{Filters: []registry.Filter{{Field: "id", Op: "=", Value: simpleCodID}}}, got)

	// Saved, it is read from the database, as the filter above asks: the
	// content kept until the turn ends is for linked records, not reads.
	records, fromDatabase, err = r.ReadRefs(d, []string{"gen_recipe_1"})
	require.NoError(t, err)
	assert.Nil(t, records)
	assert.Equal(t, []string{"gen_recipe_1"}, fromDatabase)

	// A later read of the saved row keeps the gen ref (a gen ref
	// outlives the save that gives it a row).
	r.Turn = 4
	out, err := r.Read(d, recipe, []map[string]any{{"id": simpleCodID, "name": "Simple Cod with Feta", "instructions": "Bake."}}, registry.ActionRead, nil)
	require.NoError(t, err)
	assert.Equal(t, []map[string]any{{"id": "gen_recipe_1", "name": "Simple Cod with Feta", "instructions": "Bake."}}, out)
}

// An empty label is computed from the content; a given one wins.
func TestGenerateLabels(t *testing.T) {
	d := kitchen(t)
	r := registry.New(1, nil, nil)
	plan := r.Generate(typeOf(t, d, "meal_plan"), map[string]any{"date": "2026-01-12", "meal_type": "dinner"}, "", nil)
	assert.Equal(t, "gen_meal_plan_1", plan.Ref)
	assert.Equal(t, "2026-01-12 dinner", plan.Label)

	named := r.Generate(typeOf(t, d, "recipe"), simpleCod(), "Weeknight Cod", nil)
	assert.Equal(t, "gen_recipe_1", named.Ref)
	assert.Equal(t, "Weeknight Cod", named.Label)
	assert.Equal(t, "Weeknight Cod", named.Artifact.Label)

	second := r.Generate(typeOf(t, d, "recipe"), simpleCodWithFeta(), "", nil)
	assert.Equal(t, "gen_recipe_2", second.Ref)
	assert.Equal(t, map[string]int{"meal_plan": 1, "recipe": 2}, r.GenCounters)
	assert.Equal(t, map[string]int{}, r.Counters)
}

// register_created with a gen ref promotes that ref, even when an older
// pending artifact has the same label; without one, the oldest pending
// artifact of the type with the label is promoted.
func TestCreatePromotesTheNamedOrTheOldestMatchingArtifact(t *testing.T) {
	d := kitchen(t)
	recipe := typeOf(t, d, "recipe")
	r := registry.New(1, nil, nil)
	first := r.Generate(recipe, simpleCod(), "", nil)
	second := r.Generate(recipe, simpleCod(), "", nil)
	third := r.Generate(recipe, simpleCod(), "", nil)
	require.Equal(t, []string{"gen_recipe_1", "gen_recipe_2", "gen_recipe_3"}, []string{first.Ref, second.Ref, third.Ref})

	r.Turn = 2
	e, err := r.Create(recipe, uuid.MustParse(simpleCodID), "Simple Cod", "gen_recipe_2", nil)
	require.NoError(t, err)
	assert.Same(t, second, e)
	assert.Equal(t, idp(simpleCodID), second.EntityID)

	e, err = r.Create(recipe, uuid.MustParse(lemonPastaID), "Simple Cod", "", nil)
	require.NoError(t, err)
	assert.Same(t, first, e, "the oldest pending match")

	e, err = r.Create(recipe, uuid.MustParse(misoSoupID), "Simple Cod", "", nil)
	require.NoError(t, err)
	assert.Same(t, third, e, "promoted artifacts are not matched again")

	assert.Equal(t, map[string]int{}, r.Counters)
	assert.Equal(t, registry.ArtifactPromoted, first.Artifact.Status)
	assert.Equal(t, registry.ArtifactPromoted, third.Artifact.Status)
}

// An entity created without a generate step gets the next sequential ref of
// its type.
func TestCreateWithNothingToPromoteRegistersTheNextRef(t *testing.T) {
	d := kitchen(t)
	counters, entries := afterTurn1(t, d)
	r := registry.New(2, counters, nil, entries...)
	pendingTask := r.Generate(typeOf(t, d, "task"), map[string]any{"title": "Miso Soup"}, "", nil)

	e, err := r.Create(typeOf(t, d, "recipe"), uuid.MustParse(misoSoupID), "Miso Soup", "", intp(4))
	require.NoError(t, err)
	assert.Equal(t, &registry.Entry{
		Ref: "recipe_3", EntityType: "recipe", EntityID: idp(misoSoupID), Label: "Miso Soup",
		Action: "created", TurnCreated: 2, TurnLastReferenced: 2, SourceStep: intp(4),
	}, e, "a pending task with the same label is another type")
	assert.Equal(t, registry.ArtifactPending, pendingTask.Artifact.Status)

	e, err = r.Create(typeOf(t, d, "recipe"), uuid.MustParse(stewID), "", "", nil)
	require.NoError(t, err)
	assert.Equal(t, "recipe_4", e.Ref)
	assert.Equal(t, "", e.Label)
	assert.Equal(t, map[string]int{"recipe": 4}, r.Counters)

	// Recording the same creation again changes no ref.
	again, err := r.Create(typeOf(t, d, "recipe"), uuid.MustParse(misoSoupID), "Miso Soup", "", nil)
	require.NoError(t, err)
	assert.Equal(t, "recipe_3", again.Ref)
	assert.Equal(t, map[string]int{"recipe": 4}, r.Counters)
}

func TestCreateRefusesImpossiblePromotions(t *testing.T) {
	d := kitchen(t)
	recipe := typeOf(t, d, "recipe")
	counters, entries := afterTurn1(t, d)
	r := registry.New(2, counters, nil, entries...)
	gen := r.Generate(recipe, simpleCod(), "", nil)
	r.Generate(typeOf(t, d, "task"), map[string]any{"title": "Shop for cod"}, "", nil)

	// The entity id is already recipe_1: it cannot also be gen_recipe_1.
	_, err := r.Create(recipe, uuid.MustParse(thaiCurryID), "Simple Cod", "gen_recipe_1", nil)
	re := requireCode(t, err, apperr.Conflict)
	assert.Equal(t, "entity a508000d-9b55-40f0-8886-dbdd88bd2de2 is already registered as recipe_1; it cannot also be gen_recipe_1", re.Message)
	assert.Nil(t, gen.EntityID)
	assert.Equal(t, registry.ArtifactPending, gen.Artifact.Status)
	assert.Equal(t, "generated", gen.Action)

	_, err = r.Create(recipe, uuid.MustParse(simpleCodID), "", "gen_recipe_9", nil)
	re = requireCode(t, err, apperr.RefNotFound)
	assert.Equal(t, `this session has no ref "gen_recipe_9"`, re.Message)

	_, err = r.Create(recipe, uuid.MustParse(simpleCodID), "", "recipe_2", nil)
	re = requireCode(t, err, apperr.BadUserInput)
	assert.Equal(t, "recipe_2 is not a generated ref; only gen_ refs can be promoted", re.Message)

	_, err = r.Create(recipe, uuid.MustParse(simpleCodID), "", "gen_task_1", nil)
	re = requireCode(t, err, apperr.BadUserInput)
	assert.Equal(t, "gen_task_1 is a task, not a recipe", re.Message)

	_, err = r.Create(recipe, uuid.MustParse(simpleCodID), "", "gen_recipe_1", nil)
	require.NoError(t, err)
	_, err = r.Create(recipe, uuid.MustParse(lemonPastaID), "", "gen_recipe_1", nil)
	re = requireCode(t, err, apperr.Conflict)
	assert.Equal(t, "gen_recipe_1 was already saved as entity "+simpleCodID, re.Message)

	assert.Equal(t, map[string]int{"recipe": 2}, r.Counters, "no refused creation took a number")
}

func TestUpdateArtifactWithLabelAndErrors(t *testing.T) {
	d := kitchen(t)
	recipe := typeOf(t, d, "recipe")
	counters, entries := afterTurn1(t, d)
	r := registry.New(2, counters, nil, entries...)
	gen := r.Generate(recipe, simpleCod(), "", nil)

	_, err := r.UpdateArtifact(recipe, "gen_recipe_1", map[string]any{"servings": 4}, "Cod for Four")
	require.NoError(t, err)
	assert.Equal(t, "Cod for Four", gen.Label)
	assert.Equal(t, &registry.Artifact{
		EntityType: "recipe", Label: "Cod for Four", Content: map[string]any{"servings": 4},
		Status: registry.ArtifactPending, Revision: 2, CreatedTurn: 2,
	}, gen.Artifact)

	_, err = r.UpdateArtifact(recipe, "gen_recipe_1", map[string]any{"servings": 6}, "")
	require.NoError(t, err)
	assert.Equal(t, "Cod for Four", gen.Label, "content without a label keeps the label")
	assert.Equal(t, 3, gen.Artifact.Revision)

	_, err = r.UpdateArtifact(recipe, "gen_recipe_7", simpleCod(), "")
	requireCode(t, err, apperr.RefNotFound)

	_, err = r.UpdateArtifact(recipe, "recipe_1", simpleCod(), "")
	re := requireCode(t, err, apperr.BadUserInput)
	assert.Equal(t, "recipe_1 has no artifact to update; only generated refs keep content until their turn ends", re.Message)
}

func TestReadRefsOfUnknownRefsAndArtifactsWithUUIDs(t *testing.T) {
	d := kitchen(t)
	counters, entries := afterTurn1(t, d)
	r := registry.New(2, counters, nil, entries...)
	r.Generate(typeOf(t, d, "meal_plan"), map[string]any{
		"date": "2026-01-12", "meal_type": "lunch", "recipe_id": thaiCurryID, "note": "not " + strangerID,
	}, "", nil)

	records, fromDatabase, err := r.ReadRefs(d, []string{"gen_meal_plan_1"})
	require.NoError(t, err)
	assert.Equal(t, []map[string]any{{
		"id": "gen_meal_plan_1", "date": "2026-01-12", "meal_type": "lunch", "recipe_id": "recipe_1", "note": "not [unregistered id]",
	}}, records)
	assert.Nil(t, fromDatabase)
	assertNoUUIDs(t, records)

	_, _, err = r.ReadRefs(d, []string{"gen_meal_plan_1", "gen_recipe_4"})
	re := requireCode(t, err, apperr.RefNotFound)
	assert.Equal(t, `this session has no ref "gen_recipe_4"`, re.Message)
}
