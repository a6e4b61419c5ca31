package registry_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"

	"sessiongraph/internal/registry"
)

// Ref names: "Database entities: {type}_{n} — e.g., recipe_1, inv_5,
// meal_plan_2; Generated (unsaved) entities: gen_{type}_{n}".
func TestRefNamesFollowTheRefPattern(t *testing.T) {
	assert.Equal(t, "recipe_1", registry.RefName("recipe", 1))
	assert.Equal(t, "inv_5", registry.RefName("inv", 5))
	assert.Equal(t, "meal_plan_12", registry.RefName("meal_plan", 12))
	assert.Equal(t, "gen_recipe_1", registry.GenRefName("recipe", 1))
	assert.Equal(t, "gen_meal_plan_2", registry.GenRefName("meal_plan", 2))
}

func TestParseRefTakesRefsApart(t *testing.T) {
	for ref, want := range map[string]registry.ParsedRef{
		"recipe_1":             {EntityType: "recipe", N: 1},
		"gen_recipe_1":         {EntityType: "recipe", N: 1, Generated: true},
		"meal_plan_12":         {EntityType: "meal_plan", N: 12},
		"gen_meal_plan_3":      {EntityType: "meal_plan", N: 3, Generated: true},
		"inv_5":                {EntityType: "inv", N: 5},
		"recipe_ingredient_40": {EntityType: "recipe_ingredient", N: 40},
		// "gen" alone is a legal type name, so gen_1 is its first database
		// entity, not a generated ref; gen_gen_1 is its first generated one.
		"gen_1":     {EntityType: "gen", N: 1},
		"gen_gen_1": {EntityType: "gen", N: 1, Generated: true},
	} {
		got, ok := registry.ParseRef(ref)
		assert.True(t, ok, ref)
		assert.Equal(t, want, got, ref)
		assert.True(t, registry.IsRef(ref), ref)
	}
}

func TestParseRefRejectsWhatIsNotARef(t *testing.T) {
	for _, s := range []string{
		"",
		"recipe",                      // no number
		"recipe_",                     // empty number
		"recipe_0",                    // counters start at 1
		"recipe_01",                   // a leading zero would give one entity two refs
		"recipe_+1",                   // a sign is not part of a ref
		"recipe_-1",                   //
		"recipe_1a",                   // the last segment must be a number
		"recipe_1 ",                   // no surrounding space
		" recipe_1",                   //
		"_1",                          // no type
		"gen__1",                      // gen_ with no type
		"gen_1_2",                     // type "gen_1" is not a type name
		"recipe__1",                   // double underscore
		"Recipe_1",                    // types are lower case
		"meal-plan_1",                 // hyphens are not part of type names
		"recipe_99999999999999999999", // overflows an int
		thaiCurryID,
		"A508000D-9B55-40F0-8886-DBDD88BD2DE2",
		"Thai Curry",
		"Thai_Curry",
	} {
		got, ok := registry.ParseRef(s)
		assert.False(t, ok, "%q should not parse", s)
		assert.Equal(t, registry.ParsedRef{}, got, s)
		assert.False(t, registry.IsRef(s), s)
	}
}

// Every ref the registry names parses back to its type and number.
func TestRefNamesRoundTrip(t *testing.T) {
	for _, typ := range []string{"recipe", "inv", "meal_plan", "recipe_ingredient", "gen", "x"} {
		for _, n := range []int{1, 2, 9, 10, 123456} {
			got, ok := registry.ParseRef(registry.RefName(typ, n))
			assert.True(t, ok)
			assert.Equal(t, registry.ParsedRef{EntityType: typ, N: n}, got)

			got, ok = registry.ParseRef(registry.GenRefName(typ, n))
			assert.True(t, ok)
			assert.Equal(t, registry.ParsedRef{EntityType: typ, N: n, Generated: true}, got)
		}
	}
}

func TestValidTypeNames(t *testing.T) {
	for _, name := range []string{"recipe", "inv", "meal_plan", "recipe_ingredient", "x", "gen", "genre", "recipe2", "a1_b2"} {
		assert.True(t, registry.ValidTypeName(name), name)
	}
	for _, name := range []string{
		"",
		"gen_x",       // would read as a generated x
		"gen_recipe",  //
		"x_1",         // would read as ref x_1
		"meal_plan_2", //
		"X",           // upper case
		"Recipe",      //
		"recipe_",     // trailing underscore
		"_recipe",     // leading underscore
		"meal__plan",  // double underscore
		"1recipe",     // starts with a digit
		"meal-plan",   // hyphen
		"meal plan",   // space
		strings.Repeat("a", 101),
	} {
		assert.False(t, registry.ValidTypeName(name), name)
	}
	assert.True(t, registry.ValidTypeName(strings.Repeat("a", 100)))
}

func TestParseUUIDAcceptsExactlyOneUUID(t *testing.T) {
	id, ok := registry.ParseUUID(thaiCurryID)
	assert.True(t, ok)
	assert.Equal(t, uuid.MustParse(thaiCurryID), id)

	id, ok = registry.ParseUUID("A508000D-9B55-40F0-8886-DBDD88BD2DE2")
	assert.True(t, ok)
	assert.Equal(t, thaiCurryID, id.String(), "upper case parses to the same entity")

	for _, s := range []string{
		"",
		"recipe_1",
		"a508000d9b5540f08886dbdd88bd2de2", // no hyphens
		"{a508000d-9b55-40f0-8886-dbdd88bd2de2}",
		"urn:uuid:a508000d-9b55-40f0-8886-dbdd88bd2de2",
		" a508000d-9b55-40f0-8886-dbdd88bd2de2",
		"a508000d-9b55-40f0-8886-dbdd88bd2de2 ",
		"g508000d-9b55-40f0-8886-dbdd88bd2de2", // not hex
		"a508000d-9b55-40f0-8886-dbdd88bd2de",  // short
		"id a508000d-9b55-40f0-8886-dbdd88bd2de2",
	} {
		id, ok := registry.ParseUUID(s)
		assert.False(t, ok, "%q", s)
		assert.Equal(t, uuid.Nil, id, s)
	}
}

func TestContainsUUIDFindsUUIDsInText(t *testing.T) {
	assert.True(t, registry.ContainsUUID(thaiCurryID))
	assert.True(t, registry.ContainsUUID("delete "+thaiCurryID+" please"))
	assert.True(t, registry.ContainsUUID("(id:"+thaiCurryID+")"))
	assert.False(t, registry.ContainsUUID("recipe_1 and gen_recipe_2"))
	assert.False(t, registry.ContainsUUID("a508000d9b5540f08886dbdd88bd2de2"))
}

// The action tags.
func TestActionTags(t *testing.T) {
	assert.Equal(t,
		[]string{"read", "created", "updated", "deleted", "generated", "linked"},
		[]string{registry.ActionRead, registry.ActionCreated, registry.ActionUpdated, registry.ActionDeleted, registry.ActionGenerated, registry.ActionLinked})
	assert.Equal(t, "created:user", registry.UserAction(registry.UserCreated))
	assert.Equal(t, "updated:user", registry.UserAction(registry.UserUpdated))
	assert.Equal(t, "deleted:user", registry.UserAction(registry.UserDeleted))
	assert.Equal(t, "mentioned:user", registry.UserAction(registry.UserMentioned))
}
