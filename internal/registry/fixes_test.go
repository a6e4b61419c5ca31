package registry_test

// Regression tests for bugs found in review: each states the behaviour the
// registry's rules (this package's docs) ask for, and the comment says what was
// wrong and how it was fixed.

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apperr"
	"sessiongraph/internal/registry"
)

// Fixed: uuidPattern in refname.go is wrapped in \b, so a UUID glued to a
// word character (a letter, digit or underscore) is not matched and goes
// through scrub untouched — for example an image path "…/<uuid>_large.jpg".
// No UUID reaches an LLM's context; read.go: "so that no UUID reaches a
// prompt".
//
// Fix: drop the \b anchors:
//
//	var uuidPattern = regexp.MustCompile(`(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
//
// ParseUUID keeps its len(s) == 36 check, so it still accepts exactly one UUID.
func TestFixed_UUIDGluedToAWordCharacterReachesTheLLM(t *testing.T) {
	d := kitchen(t)
	r := registry.New(1, nil, nil)
	out, err := r.Read(d, typeOf(t, d, "recipe"), []map[string]any{{
		"id":    thaiCurryID,
		"name":  "Thai Curry",
		"image": "https://cdn.example.com/recipes/" + thaiCurryID + "_large.jpg",
		"note":  "copied from x" + strangerID,
	}}, registry.ActionRead, nil)
	require.NoError(t, err)

	assert.Equal(t, []map[string]any{{
		"id":    "recipe_1",
		"name":  "Thai Curry",
		"image": "https://cdn.example.com/recipes/recipe_1_large.jpg",
		"note":  "copied from x[unregistered id]",
	}}, out)
	assertNoUUIDs(t, out)
	assert.True(t, registry.ContainsUUID("thumb_"+thaiCurryID))
}

// Fixed: labels are stored as computed from the raw record (or as given to
// Touch, Create, Generate, UpdateArtifact and ApplyEnrichment) without
// scrubbing, and labels are what every prompt shows next to a ref (the
// Think table: "`recipe_1`: Butter Chicken (recipe) [read:full] T3"; the Understand table
// "Ref | Type | Label | ..."). A task titled with an id, or a label template
// that uses an FK field, puts a UUID into every prompt. The record itself is
// scrubbed; its label is not. LLMs never see UUIDs, only simple
// refs like recipe_1.
//
// Fix: scrub labels before storing them, in setLabel and in the places that
// set Entry.Label or Artifact.Label directly (Generate, Create, UpdateArtifact):
//
//	label = r.scrub(label).(string)
func TestFixed_LabelsCarryUUIDsIntoPrompts(t *testing.T) {
	d := kitchen(t)
	r := registry.New(1, nil, nil)
	_, err := r.Read(d, typeOf(t, d, "recipe"), []map[string]any{{"id": pastaID, "name": "Pasta"}}, registry.ActionRead, nil)
	require.NoError(t, err)

	out, err := r.Read(d, typeOf(t, d, "task"), []map[string]any{
		{"id": shoppingTaskID, "title": "Buy basil for " + pastaID},
	}, registry.ActionRead, nil)
	require.NoError(t, err)
	assert.Equal(t, []map[string]any{{"id": "task_1", "title": "Buy basil for recipe_1"}}, out, "the record is scrubbed")
	assert.Equal(t, "Buy basil for recipe_1", entry(t, r, "task_1").Label, "the label must be too")

	gen := r.Generate(typeOf(t, d, "task"), map[string]any{"title": "Ask about " + strangerID}, "", nil)
	assert.Equal(t, "Ask about [unregistered id]", gen.Label)
	assert.Equal(t, "Ask about [unregistered id]", gen.Artifact.Label)

	_, err = r.ApplyEnrichment([]registry.Enrichment{{Ref: "recipe_1", Label: "Pasta " + strangerID}})
	require.NoError(t, err)
	assert.Equal(t, "Pasta [unregistered id]", entry(t, r, "recipe_1").Label)
}

// Fixed: TranslateFilters treats a pending gen ref in an FK filter like one
// in the id filter: it moves it to Pending and drops the filter. Reading
// recipe_ingredients WHERE recipe_id = gen_recipe_1 then either queries every
// recipe_ingredient (the filter is gone) or is "answered from its artifact"
// with a recipe, not recipe_ingredients. Read rerouting is about
// reading the gen ref itself (Think plans `read gen_recipe_1`, the CRUD layer
// sees a pending ref and answers from its artifact), and it only looks at
// filters whose field is "id" (_extract_refs_from_filters:
// `if field != "id": continue`).
//
// Fix: in TranslateFilters, only the id field reroutes; for an FK field,
// return the same REF_PENDING error TranslatePayload gives (nothing in the
// database can point at an unsaved entity; its linked data is in its
// artifact, so read gen_recipe_1 instead).
func TestFixed_PendingGenRefInAnFKFilterIsReroutedAndDropped(t *testing.T) {
	d := kitchen(t)
	r := registry.New(1, nil, nil)
	r.Generate(typeOf(t, d, "recipe"), simpleCod(), "", nil)

	got, err := r.TranslateFilters(typeOf(t, d, "recipe_ingredient"), []registry.Filter{
		{Field: "recipe_id", Op: "=", Value: "gen_recipe_1"},
	})
	assert.Equal(t, registry.TranslatedFilters{}, got, "got Pending %v and filters %v: a query for recipe_ingredients would be answered with a recipe, or with every row", got.Pending, got.Filters)
	requireCode(t, err, apperr.RefPending)
}

// Fixed: when every value of the id filter is a pending gen ref, the filter
// is dropped ("nothing is left to ask the database") and only the other
// filters remain. The result cannot be told apart from a query that never
// had an id filter: a caller that runs the remaining filters reads — or, for
// db_delete, deletes — every Thai recipe. The cross-turn flow
// translates an id filter to real UUIDs and then deletes; a pending
// ref left in place (so the database matches
// nothing) and reroutes a read only when all its id refs have registry data.
//
// Fix: keep the id filter with the UUIDs that remain, even when none remain,
// as an "in" over an empty list (matches no row); Pending still lists the
// refs to answer from artifacts. For a single "=" value:
// {Field: "id", Op: "in", Value: []any{}}.
func TestFixed_AllPendingIDFilterVanishesAndWidensTheQuery(t *testing.T) {
	d := kitchen(t)
	r := registry.New(1, nil, nil)
	r.Generate(typeOf(t, d, "recipe"), simpleCod(), "", nil)

	got, err := r.TranslateFilters(typeOf(t, d, "recipe"), []registry.Filter{
		{Field: "id", Op: "in", Value: []any{"gen_recipe_1"}},
		{Field: "cuisine", Op: "=", Value: "thai"},
	})
	require.NoError(t, err)
	assert.Equal(t, registry.TranslatedFilters{
		Filters: []registry.Filter{
			{Field: "id", Op: "in", Value: []any{}},
			{Field: "cuisine", Op: "=", Value: "thai"},
		},
		Pending: []string{"gen_recipe_1"},
	}, got)

	got, err = r.TranslateFilters(typeOf(t, d, "recipe"), []registry.Filter{{Field: "id", Op: "=", Value: "gen_recipe_1"}})
	require.NoError(t, err)
	assert.Equal(t, registry.TranslatedFilters{
		Filters: []registry.Filter{{Field: "id", Op: "in", Value: []any{}}},
		Pending: []string{"gen_recipe_1"},
	}, got)
}

// Fixed: a ref of another type translates without complaint: a recipes
// filter on id = inv_1 becomes inventory's UUID, and a recipe_ingredient's
// recipe_id = ingredient_1 becomes an ingredient's UUID. The LLM gets no
// error it can act on (the delete silently matches nothing, the insert fails
// on a foreign key, or worse), while Create already refuses "gen_task_1 is a
// task, not a recipe". A cheap, actionable check.
//
// Fix: entityID takes the expected type (t.Name for the id field,
// fk.TargetType for an FK) and returns INVALID_INPUT "inv_1 is an inv, not a
// recipe" when the entry's EntityType differs.
func TestFixed_RefOfAnotherTypeTranslatesSilently(t *testing.T) {
	d := kitchen(t)
	r := registry.New(1, nil, nil)
	_, err := r.Read(d, typeOf(t, d, "inv"), []map[string]any{
		{"id": riceInvID, "name": "rice", "ingredient_id": coconutMilkID},
	}, registry.ActionRead, nil)
	require.NoError(t, err)

	_, err = r.TranslateFilters(typeOf(t, d, "recipe"), []registry.Filter{{Field: "id", Op: "=", Value: "inv_1"}})
	requireCode(t, err, apperr.BadUserInput)

	_, err = r.TranslatePayload(d, typeOf(t, d, "recipe_ingredient"), map[string]any{"recipe_id": "ingredient_1", "name": "rice"})
	requireCode(t, err, apperr.BadUserInput)
}

// Fixed: scrub only walks string, []any and map[string]any, so a record
// built in Go with typed collections ([]string, map[string]string,
// []map[string]any) keeps its UUIDs, though UUIDsIn already walks
// []map[string]any. Records decoded from JSON never have these types, so
// this bites only Go callers; the package promises "no UUID reaches a
// prompt" for any record.
//
// Fix: in scrub, handle the remaining kinds with reflect (slices, arrays and
// maps with string keys), or at least []string, map[string]string and
// []map[string]any.
func TestFixed_TypedCollectionsAreNotScrubbed(t *testing.T) {
	d := kitchen(t)
	r := registry.New(1, nil, nil)
	out, err := r.Read(d, typeOf(t, d, "task"), []map[string]any{{
		"id":      shoppingTaskID,
		"title":   "Shopping",
		"related": []string{strangerID},
		"meta":    map[string]string{"source": strangerID},
		"steps":   []map[string]any{{"ref": strangerID}},
	}}, registry.ActionRead, nil)
	require.NoError(t, err)
	assertNoUUIDs(t, out)
}
