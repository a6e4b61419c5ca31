package registry_test

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent/schema/schematype"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/registry"
)

// The kitchen domain (recipes, meal plans, inventory), built by hand so that these tests do not
// depend on the domains package.
func kitchen(t *testing.T) *registry.Domain {
	t.Helper()
	d, err := registry.NewDomain("kitchen", []registry.EntityType{
		{
			Name: "recipe", Table: "recipes", LabelField: "name",
			DetailFields:    []string{"instructions"},
			NestedRelations: []schematype.NestedRelation{{Field: "recipe_ingredients", EntityType: "recipe_ingredient"}},
		},
		{
			Name: "recipe_ingredient", Table: "recipe_ingredients", LabelField: "name",
			FKFields: []schematype.FKField{
				{Field: "recipe_id", TargetType: "recipe", Table: "recipes", NameColumn: "name"},
				{Field: "ingredient_id", TargetType: "ingredient", Table: "ingredients", NameColumn: "name"},
			},
		},
		{Name: "ingredient", Table: "ingredients", LabelField: "name"},
		{
			Name: "inv", Table: "inventory", LabelField: "name",
			FKFields: []schematype.FKField{{Field: "ingredient_id", TargetType: "ingredient", Table: "ingredients", NameColumn: "name"}},
		},
		{
			Name: "meal_plan", Table: "meal_plans", LabelTemplate: "{date} {meal_type}",
			FKFields: []schematype.FKField{{Field: "recipe_id", TargetType: "recipe", Table: "recipes", NameColumn: "name"}},
		},
		{Name: "task", Table: "tasks", LabelField: "title"},
	})
	require.NoError(t, err)
	require.NoError(t, d.Check())
	return d
}

// typeOf returns an entity type of the kitchen domain.
func typeOf(t *testing.T, d *registry.Domain, name string) *registry.EntityType {
	t.Helper()
	et, err := d.Type(name)
	require.NoError(t, err)
	return et
}

// Database ids of the kitchen's rows. Each is a valid v4 UUID; the first
// digits say what the row is, so a failing diff is easy to read.
const (
	thaiCurryID     = "a508000d-9b55-40f0-8886-dbdd88bd2de2"
	pastaID         = "b2c1d3e4-1111-4a2b-8c3d-000000000002"
	butterChickenID = "b2c1d3e4-1111-4a2b-8c3d-000000000003"
	misoSoupID      = "b2c1d3e4-1111-4a2b-8c3d-000000000004"
	simpleCodID     = "b2c1d3e4-1111-4a2b-8c3d-000000000005"
	lemonPastaID    = "b2c1d3e4-1111-4a2b-8c3d-000000000006"
	stewID          = "b2c1d3e4-1111-4a2b-8c3d-000000000007"

	coconutMilkRowID = "c3d2e1f0-2222-4b3c-9d4e-000000000001" // recipe_ingredients rows
	lemongrassRowID  = "c3d2e1f0-2222-4b3c-9d4e-000000000002"

	coconutMilkID = "d4e3f2a1-3333-4c4d-8e5f-000000000001" // ingredients
	lemongrassID  = "d4e3f2a1-3333-4c4d-8e5f-000000000002"
	codID         = "d4e3f2a1-3333-4c4d-8e5f-000000000003"

	riceInvID  = "e5f4a3b2-4444-4d5e-9f6a-000000000001" // inventory
	flourInvID = "e5f4a3b2-4444-4d5e-9f6a-000000000002"

	mondayLunchID   = "f6a5b4c3-5555-4e6f-8a7b-000000000001" // meal_plans
	tuesdayDinnerID = "f6a5b4c3-5555-4e6f-8a7b-000000000002"

	shoppingTaskID = "a7b6c5d4-6666-4f7a-9b8c-000000000001" // tasks

	strangerID = "0f0e0d0c-7777-4a8b-8c9d-0000000000ff" // no row of the session knows it
)

func idp(s string) *uuid.UUID {
	id := uuid.MustParse(s)
	return &id
}

func intp(n int) *int { return &n }

func strp(s string) *string { return &s }

// refsOf lists the refs of entries, in order.
func refsOf(entries []*registry.Entry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Ref
	}
	return out
}

// entry returns a ref's entry, failing the test when the ref is not loaded.
func entry(t *testing.T, r *registry.Registry, ref string) *registry.Entry {
	t.Helper()
	e, ok := r.Entry(ref)
	require.Truef(t, ok, "the registry has no entry %s", ref)
	return e
}

// requireCode asserts that err is an *apperr.Error with the code, and
// returns it for checks on its message.
func requireCode(t *testing.T, err error, code apperr.Code) *apperr.Error {
	t.Helper()
	var re *apperr.Error
	require.Truef(t, errors.As(err, &re), "want an *apperr.Error with code %s, got %v", code, err)
	assert.Equal(t, code, re.Code, re.Message)
	return re
}

// uuidShaped is any UUID-shaped text, glued to its neighbours or not.
var uuidShaped = regexp.MustCompile(`(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// uuidLeaks walks any value (maps, slices, arrays, structs, pointers, map
// keys included) and lists each string holding UUID-shaped text, with its path.
func uuidLeaks(v any) []string {
	var leaks []string
	var walk func(path string, v reflect.Value)
	walk = func(path string, v reflect.Value) {
		switch v.Kind() {
		case reflect.Interface, reflect.Pointer:
			if !v.IsNil() {
				walk(path, v.Elem())
			}
		case reflect.String:
			if s := v.String(); uuidShaped.MatchString(s) {
				leaks = append(leaks, fmt.Sprintf("%s = %q", path, s))
			}
		case reflect.Slice, reflect.Array:
			for i := range v.Len() {
				walk(fmt.Sprintf("%s[%d]", path, i), v.Index(i))
			}
		case reflect.Map:
			iter := v.MapRange()
			for iter.Next() {
				walk(path+" key", iter.Key())
				walk(fmt.Sprintf("%s[%v]", path, iter.Key()), iter.Value())
			}
		case reflect.Struct:
			for i := range v.NumField() {
				if f := v.Type().Field(i); f.IsExported() {
					walk(path+"."+f.Name, v.Field(i))
				}
			}
		}
	}
	walk("value", reflect.ValueOf(v))
	return leaks
}

// assertNoUUIDs fails for any UUID-shaped text in v: no UUID ever reaches an
// LLM's context.
func assertNoUUIDs(t *testing.T, v any) {
	t.Helper()
	assert.Empty(t, uuidLeaks(v), "UUIDs would reach the LLM")
}

func TestUUIDLeaksFindsUUIDsAnywhere(t *testing.T) {
	for name, v := range map[string]any{
		"string":          "see " + thaiCurryID,
		"glued":           "x" + thaiCurryID + "_large.jpg",
		"upper case":      "A508000D-9B55-40F0-8886-DBDD88BD2DE2",
		"nested list":     map[string]any{"a": []any{map[string]any{"b": thaiCurryID}}},
		"map key":         map[string]any{thaiCurryID: 1},
		"typed slice":     []string{"ok", thaiCurryID},
		"struct field":    registry.Enrichment{Ref: "recipe_1", Label: thaiCurryID},
		"pointer to list": &[]map[string]any{{"id": thaiCurryID}},
	} {
		assert.Len(t, uuidLeaks(v), 1, name)
	}
	assert.Equal(t, []string{`value[0][id] = "a508000d-9b55-40f0-8886-dbdd88bd2de2"`},
		uuidLeaks([]map[string]any{{"id": thaiCurryID}}))
	assert.Empty(t, uuidLeaks(map[string]any{"id": "recipe_1", "n": 3, "tags": []any{"thai", nil}}))
}
