package registry_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apperr"
	"sessiongraph/internal/registry"
)

// Registering from the UI: an already known UUID gets its action updated and
// is touched; a new one gets a ref and is registered with an action like
// "created:user" or "updated:user"".
func TestTouchRecordsFrontendChanges(t *testing.T) {
	d := kitchen(t)
	recipe := typeOf(t, d, "recipe")
	counters, entries := afterTurn1(t, d)
	r := registry.New(3, counters, nil, entries...)

	created, err := r.Touch(recipe, uuid.MustParse(stewID), registry.UserAction(registry.UserCreated), "Grandma's Stew", nil)
	require.NoError(t, err)
	assert.Equal(t, &registry.Entry{
		Ref: "recipe_3", EntityType: "recipe", EntityID: idp(stewID), Label: "Grandma's Stew",
		Action: "created:user", TurnCreated: 3, TurnLastReferenced: 3,
	}, created)

	updated, err := r.Touch(recipe, uuid.MustParse(thaiCurryID), registry.UserAction(registry.UserUpdated), "Thai Green Curry", nil)
	require.NoError(t, err)
	assert.Equal(t, &registry.Entry{
		Ref: "recipe_1", EntityType: "recipe", EntityID: idp(thaiCurryID), Label: "Thai Green Curry",
		Action: "updated:user", DetailLevel: registry.DetailSummary, TurnCreated: 1, TurnLastReferenced: 3,
	}, updated)

	deleted, err := r.Touch(recipe, uuid.MustParse(pastaID), registry.UserAction(registry.UserDeleted), "", nil)
	require.NoError(t, err)
	assert.Equal(t, "recipe_2", deleted.Ref)
	assert.Equal(t, "deleted:user", deleted.Action)
	assert.Equal(t, "Pasta", deleted.Label, "an empty label keeps the old one")

	mentioned, err := r.Touch(recipe, uuid.MustParse(stewID), registry.UserAction(registry.UserMentioned), "", nil)
	require.NoError(t, err)
	assert.Equal(t, "recipe_3", mentioned.Ref)
	assert.Equal(t, "mentioned:user", mentioned.Action)

	assert.Equal(t, map[string]int{"recipe": 3}, r.Counters)
	assert.Equal(t, []string{"recipe_3", "recipe_1", "recipe_2"}, refsOf(r.Changed()))

	_, err = r.Touch(typeOf(t, d, "task"), uuid.MustParse(thaiCurryID), registry.UserAction(registry.UserUpdated), "", nil)
	requireCode(t, err, apperr.Conflict)
}

// The runtime's own writes: updated and deleted.
func TestTouchRecordsAIWrites(t *testing.T) {
	d := kitchen(t)
	counters, entries := afterTurn1(t, d)
	r := registry.New(2, counters, nil, entries...)

	e, err := r.Touch(typeOf(t, d, "recipe"), uuid.MustParse(pastaID), registry.ActionDeleted, "", intp(1))
	require.NoError(t, err)
	assert.Equal(t, &registry.Entry{
		Ref: "recipe_2", EntityType: "recipe", EntityID: idp(pastaID), Label: "Pasta",
		Action: "deleted", DetailLevel: registry.DetailSummary, TurnCreated: 1, TurnLastReferenced: 2,
	}, e)
}

// Mention records that refs came up this turn without changing how they
// entered the registry.
func TestMentionKeepsTheActionAndTouches(t *testing.T) {
	d := kitchen(t)
	r := registry.New(1, nil, nil)
	_, err := r.Read(d, typeOf(t, d, "meal_plan"), []map[string]any{
		{"id": mondayLunchID, "date": "2026-01-12", "meal_type": "lunch", "recipe_id": butterChickenID},
	}, registry.ActionRead, nil)
	require.NoError(t, err)
	gen := r.Generate(typeOf(t, d, "recipe"), simpleCod(), "", nil)

	r.Turn = 5
	require.NoError(t, r.Mention([]string{"recipe_1", "gen_recipe_1"}))
	assert.Equal(t, "linked", entry(t, r, "recipe_1").Action)
	assert.Equal(t, 5, entry(t, r, "recipe_1").TurnLastReferenced)
	assert.Equal(t, 1, entry(t, r, "recipe_1").TurnCreated)
	assert.Equal(t, "generated", gen.Action)
	assert.Equal(t, 5, gen.TurnLastReferenced)
	assert.Equal(t, 1, entry(t, r, "meal_plan_1").TurnLastReferenced, "refs not mentioned are left alone")

	err = r.Mention([]string{"recipe_1", "inv_3"})
	re := requireCode(t, err, apperr.RefNotFound)
	assert.Equal(t, `this session has no ref "inv_3"`, re.Message)
}

// Understand's curation: retain with a reason, demote by clearing.
func TestRetainAndRelease(t *testing.T) {
	d := kitchen(t)
	counters, entries := afterTurn1(t, d)
	r := registry.New(3, counters, nil, entries...)

	e, err := r.Retain("recipe_1", "User's ongoing weekly meal plan goal")
	require.NoError(t, err)
	assert.Equal(t, strp("User's ongoing weekly meal plan goal"), e.ActiveReason)
	assert.Equal(t, 1, e.TurnLastReferenced, "retaining is not a reference")
	assert.Equal(t, []string{"recipe_1"}, refsOf(r.Changed()))

	_, err = r.Retain("recipe_2", "")
	re := requireCode(t, err, apperr.BadUserInput)
	assert.Equal(t, "a reason is required to retain recipe_2: say why it stays relevant", re.Message)
	assert.Nil(t, entry(t, r, "recipe_2").ActiveReason)

	_, err = r.Retain("recipe_8", "because")
	requireCode(t, err, apperr.RefNotFound)

	released, err := r.Release("recipe_1")
	require.NoError(t, err)
	assert.Nil(t, released.ActiveReason)

	_, err = r.Release("recipe_8")
	requireCode(t, err, apperr.RefNotFound)
}

func TestApplyEnrichmentRejectsUnknownRefsAndEmptyLabels(t *testing.T) {
	d := kitchen(t)
	r := registry.New(1, nil, nil)
	_, err := r.Read(d, typeOf(t, d, "inv"), []map[string]any{
		{"id": riceInvID, "name": "rice", "ingredient_id": coconutMilkID},
	}, registry.ActionRead, nil)
	require.NoError(t, err)

	_, err = r.ApplyEnrichment([]registry.Enrichment{{Ref: "ingredient_1", Label: ""}})
	re := requireCode(t, err, apperr.BadUserInput)
	assert.Equal(t, "the label for ingredient_1 is empty", re.Message)
	assert.True(t, entry(t, r, "ingredient_1").Queued())

	_, err = r.ApplyEnrichment([]registry.Enrichment{{Ref: "ingredient_5", Label: "basil"}})
	requireCode(t, err, apperr.RefNotFound)

	out, err := r.ApplyEnrichment(nil)
	require.NoError(t, err)
	assert.Empty(t, out)
}

// The tier example:
//
//	Turn 1: Read recipe_1, recipe_2, recipe_3
//	Turn 2: Read inv_1, inv_2 (recipe_1-3 still in 2-turn window)
//	Turn 3: Read meal_plan_1 (recipe_1-3 fall out of window unless Understand retains them)
//	        inv_1, inv_2 still in window
//
// plus a recipe generated in turn 1 and never saved, which stays in the
// Generated tier however old it is.
func TestSortTiersFollowsTheTierExample(t *testing.T) {
	d := kitchen(t)
	r := registry.New(1, nil, nil)
	_, err := r.Read(d, typeOf(t, d, "recipe"), []map[string]any{
		{"id": thaiCurryID, "name": "Thai Curry"},
		{"id": pastaID, "name": "Pasta"},
		{"id": butterChickenID, "name": "Butter Chicken"},
	}, registry.ActionRead, nil)
	require.NoError(t, err)
	r.Generate(typeOf(t, d, "recipe"), simpleCod(), "", nil)

	r.Turn = 2
	_, err = r.Read(d, typeOf(t, d, "inv"), []map[string]any{
		{"id": riceInvID, "name": "rice"},
		{"id": flourInvID, "name": "flour"},
	}, registry.ActionRead, nil)
	require.NoError(t, err)
	// Still inside the window at turn 2.
	tiers := registry.SortTiers(r.Changed(), 2, registry.DefaultWindow)
	assert.Equal(t, []string{"recipe_1", "recipe_2", "recipe_3", "inv_1", "inv_2"}, refsOf(tiers.Active))

	r.Turn = 3
	_, err = r.Read(d, typeOf(t, d, "meal_plan"), []map[string]any{
		{"id": mondayLunchID, "date": "2026-01-12", "meal_type": "lunch"},
	}, registry.ActionRead, nil)
	require.NoError(t, err)
	_, err = r.Retain("recipe_2", "User's ongoing weekly meal plan goal")
	require.NoError(t, err)

	tiers = registry.SortTiers(r.Changed(), 3, registry.DefaultWindow)
	assert.Equal(t, []string{"inv_1", "inv_2", "meal_plan_1"}, refsOf(tiers.Active))
	assert.Equal(t, []string{"gen_recipe_1"}, refsOf(tiers.Generated))
	assert.Equal(t, []string{"recipe_2"}, refsOf(tiers.Retained))
	assert.Equal(t, strp("User's ongoing weekly meal plan goal"), tiers.Retained[0].ActiveReason)

	// Understand demotes it: recipe_2 falls out like recipe_1 and recipe_3.
	_, err = r.Release("recipe_2")
	require.NoError(t, err)
	tiers = registry.SortTiers(r.Changed(), 3, registry.DefaultWindow)
	assert.Equal(t, []string{"inv_1", "inv_2", "meal_plan_1"}, refsOf(tiers.Active))
	assert.Equal(t, []string{"gen_recipe_1"}, refsOf(tiers.Generated))
	assert.Empty(t, tiers.Retained)
}

// Each ref sits in one tier: a retained ref inside the window is active,
// a saved artifact is no longer generated, and a mention brings an old ref
// back into the window.
func TestSortTiersPutsEachRefInOneTier(t *testing.T) {
	d := kitchen(t)
	r := registry.New(1, nil, nil)
	_, err := r.Read(d, typeOf(t, d, "recipe"), []map[string]any{
		{"id": thaiCurryID, "name": "Thai Curry"},
		{"id": pastaID, "name": "Pasta"},
	}, registry.ActionRead, nil)
	require.NoError(t, err)
	saved := r.Generate(typeOf(t, d, "recipe"), simpleCod(), "", nil)
	pending := r.Generate(typeOf(t, d, "meal_plan"), map[string]any{"date": "2026-01-12", "meal_type": "lunch"}, "", nil)
	_, err = r.Retain("gen_meal_plan_1", "User's ongoing goal")
	require.NoError(t, err)
	_, err = r.Retain("recipe_1", "Favourite")
	require.NoError(t, err)
	_, err = r.Create(typeOf(t, d, "recipe"), uuid.MustParse(simpleCodID), "Simple Cod", "", nil)
	require.NoError(t, err)

	tiers := registry.SortTiers(r.Changed(), 1, registry.DefaultWindow)
	assert.Equal(t, []string{"recipe_1", "recipe_2", "gen_recipe_1"}, refsOf(tiers.Active))
	assert.Equal(t, []string{"gen_meal_plan_1"}, refsOf(tiers.Generated))
	assert.Empty(t, tiers.Retained)
	assert.Equal(t, registry.ArtifactPromoted, saved.Artifact.Status)
	assert.Equal(t, registry.ArtifactPending, pending.Artifact.Status)

	r.Turn = 4
	require.NoError(t, r.Mention([]string{"recipe_2"}))
	tiers = registry.SortTiers(r.Changed(), 4, registry.DefaultWindow)
	assert.Equal(t, []string{"recipe_2"}, refsOf(tiers.Active))
	assert.Equal(t, []string{"gen_meal_plan_1"}, refsOf(tiers.Generated))
	assert.Equal(t, []string{"recipe_1"}, refsOf(tiers.Retained))
}

func TestActiveSince(t *testing.T) {
	assert.Equal(t, 2, registry.DefaultWindow)
	assert.Equal(t, 2, registry.ActiveSince(3, 2), "at turn 3, turns 2 and 3 are in the window")
	assert.Equal(t, 3, registry.ActiveSince(3, 1))
	assert.Equal(t, 0, registry.ActiveSince(1, 2))
}
