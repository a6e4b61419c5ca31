package registry_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apperr"
	"sessiongraph/internal/registry"
)

// The read flow. Turn 1: "what recipes do i have?" — db_read returns
// two recipes, the system assigns recipe_1 and recipe_2 with their labels,
// and the LLM sees refs instead of ids.
func TestReadAssignsRefsAndLabels(t *testing.T) {
	d := kitchen(t)
	r := registry.New(1, nil, nil)

	out, err := r.Read(d, typeOf(t, d, "recipe"), []map[string]any{
		{"id": thaiCurryID, "name": "Thai Curry"},
		{"id": pastaID, "name": "Pasta"},
	}, registry.ActionRead, intp(1))
	require.NoError(t, err)

	assert.Equal(t, []map[string]any{
		{"id": "recipe_1", "name": "Thai Curry"},
		{"id": "recipe_2", "name": "Pasta"},
	}, out)
	assertNoUUIDs(t, out)
	assert.Equal(t, &registry.Entry{
		Ref: "recipe_1", EntityType: "recipe", EntityID: idp(thaiCurryID), Label: "Thai Curry",
		Action: "read", DetailLevel: registry.DetailSummary, TurnCreated: 1, TurnLastReferenced: 1, SourceStep: intp(1),
	}, entry(t, r, "recipe_1"))
	assert.Equal(t, &registry.Entry{
		Ref: "recipe_2", EntityType: "recipe", EntityID: idp(pastaID), Label: "Pasta",
		Action: "read", DetailLevel: registry.DetailSummary, TurnCreated: 1, TurnLastReferenced: 1, SourceStep: intp(1),
	}, entry(t, r, "recipe_2"))
	assert.Equal(t, map[string]int{"recipe": 2}, r.Counters)
	assert.Equal(t, map[string]int{}, r.GenCounters)
	assert.Equal(t, []string{"recipe_1", "recipe_2"}, refsOf(r.Changed()))

	byID, ok := r.ByEntityID(*idp(pastaID))
	require.True(t, ok)
	assert.Equal(t, "recipe_2", byID.Ref)
}

// A UUID that already has a ref (from a prior turn) reuses it, and counters
// never reset within a session ("recipe_1 always refers to
// the same entity."
func TestReadAcrossTurnsReusesRefsAndNeverResetsCounters(t *testing.T) {
	d := kitchen(t)
	recipe := typeOf(t, d, "recipe")

	// Turn 1, as the engine would persist it.
	turn1 := registry.New(1, nil, nil)
	_, err := turn1.Read(d, recipe, []map[string]any{
		{"id": thaiCurryID, "name": "Thai Curry"},
		{"id": pastaID, "name": "Pasta"},
	}, registry.ActionRead, nil)
	require.NoError(t, err)
	counters := turn1.Counters

	// Turn 2 loads the session's counters and the entries the read touches.
	turn2 := registry.New(2, counters, nil, entry(t, turn1, "recipe_2"))
	assert.Empty(t, turn2.Changed(), "loading entries changes nothing")
	out, err := turn2.Read(d, recipe, []map[string]any{
		{"id": pastaID, "name": "Pasta"},
		{"id": butterChickenID, "name": "Butter Chicken"},
	}, registry.ActionRead, nil)
	require.NoError(t, err)

	assert.Equal(t, []map[string]any{
		{"id": "recipe_2", "name": "Pasta"},
		{"id": "recipe_3", "name": "Butter Chicken"},
	}, out)
	assert.Equal(t, &registry.Entry{
		Ref: "recipe_2", EntityType: "recipe", EntityID: idp(pastaID), Label: "Pasta",
		Action: "read", DetailLevel: registry.DetailSummary, TurnCreated: 1, TurnLastReferenced: 2,
	}, entry(t, turn2, "recipe_2"))
	assert.Equal(t, map[string]int{"recipe": 3}, turn2.Counters, "reusing recipe_2 consumed no number")
	assert.Equal(t, map[string]int{"recipe": 2}, counters, "New copies the session's counters")
	assert.Equal(t, []string{"recipe_2", "recipe_3"}, refsOf(turn2.Changed()))

	// Turn 3 loads none of the earlier entries: the next recipe is still
	// recipe_4, never a second recipe_1.
	turn3 := registry.New(3, turn2.Counters, nil)
	out, err = turn3.Read(d, recipe, []map[string]any{{"id": misoSoupID, "name": "Miso Soup"}}, registry.ActionRead, nil)
	require.NoError(t, err)
	assert.Equal(t, []map[string]any{{"id": "recipe_4", "name": "Miso Soup"}}, out)
}

// A read that leaves the label field out keeps the label the ref had.
func TestReadWithoutLabelFieldKeepsTheLabel(t *testing.T) {
	d := kitchen(t)
	r := registry.New(1, nil, nil)
	recipe := typeOf(t, d, "recipe")
	_, err := r.Read(d, recipe, []map[string]any{{"id": thaiCurryID, "name": "Thai Curry"}}, registry.ActionRead, nil)
	require.NoError(t, err)

	r.Turn = 2
	out, err := r.Read(d, recipe, []map[string]any{{"id": thaiCurryID, "cuisine": "thai"}}, registry.ActionRead, nil)
	require.NoError(t, err)
	assert.Equal(t, []map[string]any{{"id": "recipe_1", "cuisine": "thai"}}, out)
	assert.Equal(t, "Thai Curry", entry(t, r, "recipe_1").Label)
	assert.Equal(t, 2, entry(t, r, "recipe_1").TurnLastReferenced)
}

// Read with ActionUpdated records what the runtime wrote back.
func TestReadOfAnUpdateTagsUpdated(t *testing.T) {
	d := kitchen(t)
	r := registry.New(1, nil, nil)
	recipe := typeOf(t, d, "recipe")
	_, err := r.Read(d, recipe, []map[string]any{{"id": thaiCurryID, "name": "Thai Curry"}}, registry.ActionRead, nil)
	require.NoError(t, err)

	r.Turn = 2
	out, err := r.Read(d, recipe, []map[string]any{{"id": thaiCurryID, "name": "Thai Green Curry"}}, registry.ActionUpdated, intp(3))
	require.NoError(t, err)
	assert.Equal(t, []map[string]any{{"id": "recipe_1", "name": "Thai Green Curry"}}, out)
	assert.Equal(t, &registry.Entry{
		Ref: "recipe_1", EntityType: "recipe", EntityID: idp(thaiCurryID), Label: "Thai Green Curry",
		Action: "updated", DetailLevel: registry.DetailSummary, TurnCreated: 1, TurnLastReferenced: 2,
	}, entry(t, r, "recipe_1"), "the source step stays the one that first registered the ref")
}

// Detail tracking: {"level": "summary"} for a summary read and
// {"level": "full", "full_turn": 3} for a full read in turn 3.
func TestDetailTrackingAcrossReads(t *testing.T) {
	d := kitchen(t)
	recipe := typeOf(t, d, "recipe")
	r := registry.New(1, nil, nil)

	_, err := r.Read(d, recipe, []map[string]any{{"id": thaiCurryID, "name": "Thai Curry", "cuisine": "thai"}}, registry.ActionRead, nil)
	require.NoError(t, err)
	e := entry(t, r, "recipe_1")
	assert.Equal(t, registry.DetailSummary, e.DetailLevel)
	assert.Nil(t, e.FullTurn)

	r.Turn = 3
	_, err = r.Read(d, recipe, []map[string]any{{"id": thaiCurryID, "name": "Thai Curry", "instructions": "Simmer."}}, registry.ActionRead, nil)
	require.NoError(t, err)
	assert.Equal(t, registry.DetailFull, e.DetailLevel)
	assert.Equal(t, intp(3), e.FullTurn)

	// A later summary read lowers the level and keeps the turn of the last
	// full read: the level is the last read's.
	r.Turn = 4
	_, err = r.Read(d, recipe, []map[string]any{{"id": thaiCurryID, "name": "Thai Curry"}}, registry.ActionRead, nil)
	require.NoError(t, err)
	assert.Equal(t, registry.DetailSummary, e.DetailLevel)
	assert.Equal(t, intp(3), e.FullTurn)

	// Types without detail fields track nothing.
	_, err = r.Read(d, typeOf(t, d, "inv"), []map[string]any{{"id": riceInvID, "name": "rice"}}, registry.ActionRead, nil)
	require.NoError(t, err)
	assert.Equal(t, "", entry(t, r, "inv_1").DetailLevel)
	assert.Nil(t, entry(t, r, "inv_1").FullTurn)
}

// The package's promise: "any other UUID left in the record is replaced by
// its ref, or by "[unregistered id]", so that no UUID reaches a prompt".
func TestReadScrubsEveryUUID(t *testing.T) {
	d := kitchen(t)
	r := registry.New(1, nil, nil)
	_, err := r.Read(d, typeOf(t, d, "recipe"), []map[string]any{
		{"id": thaiCurryID, "name": "Thai Curry"},
		{"id": pastaID, "name": "Pasta"},
	}, registry.ActionRead, nil)
	require.NoError(t, err)

	out, err := r.Read(d, typeOf(t, d, "task"), []map[string]any{{
		"id":            shoppingTaskID,
		"title":         "Shopping",
		"description":   "Buy basil for " + pastaID + " and ask about " + strangerID + ".",
		"source_recipe": thaiCurryID, // not an FK field of task
		"owner_id":      strangerID,
		"upper":         "A508000D-9B55-40F0-8886-DBDD88BD2DE2",
		"history":       []any{map[string]any{"recipe": pastaID, "at": "2026-01-10"}, strangerID, 3, nil},
		"by_recipe":     map[string]any{thaiCurryID: "twice", strangerID: "once"},
		"done":          false,
	}}, registry.ActionRead, nil)
	require.NoError(t, err)

	assert.Equal(t, []map[string]any{{
		"id":            "task_1",
		"title":         "Shopping",
		"description":   "Buy basil for recipe_2 and ask about [unregistered id].",
		"source_recipe": "recipe_1",
		"owner_id":      "[unregistered id]",
		"upper":         "recipe_1",
		"history":       []any{map[string]any{"recipe": "recipe_2", "at": "2026-01-10"}, "[unregistered id]", 3, nil},
		"by_recipe":     map[string]any{"recipe_1": "twice", "[unregistered id]": "once"},
		"done":          false,
	}}, out)
	assertNoUUIDs(t, out)
	assert.Equal(t, map[string]int{"recipe": 2, "task": 1}, r.Counters, "scrubbing registers nothing")
}

// Read does not change the records it was given.
func TestReadLeavesItsInputAlone(t *testing.T) {
	d := kitchen(t)
	r := registry.New(1, nil, nil)
	rec := map[string]any{"id": mondayLunchID, "date": "2026-01-12", "meal_type": "lunch", "recipe_id": butterChickenID, "note": "for " + strangerID}
	_, err := r.Read(d, typeOf(t, d, "meal_plan"), []map[string]any{rec}, registry.ActionRead, nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"id": mondayLunchID, "date": "2026-01-12", "meal_type": "lunch", "recipe_id": butterChickenID, "note": "for " + strangerID}, rec)
}

func TestReadRejectsRecordsWithoutAUsableID(t *testing.T) {
	d := kitchen(t)
	recipe := typeOf(t, d, "recipe")

	for name, tc := range map[string]struct {
		records []map[string]any
		code    apperr.Code
		message string
	}{
		"no id": {
			[]map[string]any{{"id": thaiCurryID, "name": "Thai Curry"}, {"name": "Pasta"}},
			apperr.InvalidRecord, `records[1] has no "id" field: every recipe record needs its id`,
		},
		"null id": {
			[]map[string]any{{"id": nil, "name": "Pasta"}},
			apperr.InvalidRecord, `records[0] has no "id" field: every recipe record needs its id`,
		},
		"a ref for an id": {
			[]map[string]any{{"id": "recipe_1", "name": "Pasta"}},
			apperr.InvalidID, `records[0].id is recipe_1, not a UUID`,
		},
		"a number for an id": {
			[]map[string]any{{"id": 42, "name": "Pasta"}},
			apperr.InvalidID, `records[0].id is 42, not a UUID`,
		},
		"nested child without id": {
			[]map[string]any{{"id": thaiCurryID, "recipe_ingredients": []any{map[string]any{"name": "basil"}}}},
			apperr.InvalidRecord, `records[0].recipe_ingredients[0] has no "id" field: every recipe_ingredient record needs its id`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			r := registry.New(1, nil, nil)
			out, err := r.Read(d, recipe, tc.records, registry.ActionRead, nil)
			re := requireCode(t, err, tc.code)
			assert.Equal(t, tc.message, re.Message)
			assert.Nil(t, out)
		})
	}
}

// The same entity cannot be two types.
func TestReadOfOneUUIDAsTwoTypesIsAConflict(t *testing.T) {
	d := kitchen(t)
	r := registry.New(1, nil, nil)
	_, err := r.Read(d, typeOf(t, d, "recipe"), []map[string]any{{"id": thaiCurryID, "name": "Thai Curry"}}, registry.ActionRead, nil)
	require.NoError(t, err)

	_, err = r.Read(d, typeOf(t, d, "ingredient"), []map[string]any{{"id": thaiCurryID, "name": "curry paste"}}, registry.ActionRead, nil)
	re := requireCode(t, err, apperr.Conflict)
	assert.Equal(t, "entity a508000d-9b55-40f0-8886-dbdd88bd2de2 is already registered as recipe_1, a recipe, not a ingredient", re.Message)
	assert.Equal(t, "read", entry(t, r, "recipe_1").Action)
	assert.Equal(t, "Thai Curry", entry(t, r, "recipe_1").Label)
}

// The engine loads entries by the UUIDs a read carries.
func TestUUIDsInFindsEveryUUID(t *testing.T) {
	ids := registry.UUIDsIn([]map[string]any{
		{"id": mondayLunchID, "recipe_id": butterChickenID},
		{"id": tuesdayDinnerID, "note": "like " + mondayLunchID, "nested": []any{map[string]any{strangerID: true}}},
	})
	got := make([]string, len(ids))
	for i, id := range ids {
		got[i] = id.String()
	}
	assert.ElementsMatch(t, []string{mondayLunchID, butterChickenID, tuesdayDinnerID, strangerID}, got)
	assert.Empty(t, registry.UUIDsIn(map[string]any{"id": "recipe_1"}))
}

// A read runs inside the session's transaction: once its request is over
// (deadline passed, client gone), it stops between records with the
// request's error and registers nothing more.
func TestReadStopsWhenItsRequestEnds(t *testing.T) {
	d := kitchen(t)
	r := registry.New(1, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	r.StopWhen(ctx)
	records := []map[string]any{{"id": thaiCurryID, "name": "Thai Curry"}, {"id": pastaID, "name": "Pasta"}}
	_, err := r.Read(d, typeOf(t, d, "recipe"), records[:1], registry.ActionRead, nil)
	require.NoError(t, err)
	cancel()
	_, err = r.Read(d, typeOf(t, d, "recipe"), records[1:], registry.ActionRead, nil)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, map[string]int{"recipe": 1}, r.Counters, "the second read registered nothing")
}
