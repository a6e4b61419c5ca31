package domains

import (
	"encoding/json"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent/schema/schematype"
)

// yamlKeys lists the yaml keys a struct reads.
func yamlKeys(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		if k, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); k != "" {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// described lists the properties of a schema object, failing for one
// without a description (every key is explained).
func described(t *testing.T, obj map[string]any, defs map[string]any) []string {
	t.Helper()
	var out []string
	for k, v := range obj["properties"].(map[string]any) {
		p := v.(map[string]any)
		desc, _ := p["description"].(string)
		if ref, ok := p["$ref"].(string); ok && desc == "" {
			desc, _ = defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)["description"].(string)
		}
		assert.NotEmpty(t, desc, "the schema's %q has no description", k)
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// The schema defines, and explains, exactly the keys the loader reads: a
// key added to the loader and not to the schema (or the other way) fails.
func TestSchemaDefinesEveryKeyTheLoaderReads(t *testing.T) {
	var s map[string]any
	require.NoError(t, json.Unmarshal(Schema, &s))
	defs := s["$defs"].(map[string]any)
	et := defs["entityType"].(map[string]any)
	assert.Equal(t, yamlKeys(reflect.TypeOf(file{})), described(t, s, defs))
	assert.Equal(t, yamlKeys(reflect.TypeOf(entityType{})), described(t, et, defs))
	props := et["properties"].(map[string]any)
	fk := props["fkFields"].(map[string]any)["items"].(map[string]any)
	assert.Equal(t, yamlKeys(reflect.TypeOf(schematype.FKField{})), described(t, fk, defs))
	nested := props["nestedRelations"].(map[string]any)["items"].(map[string]any)
	assert.Equal(t, yamlKeys(reflect.TypeOf(schematype.NestedRelation{})), described(t, nested, defs))
	for _, k := range []string{"condensed", "contentMarkers", "detailFields", "dataLegend"} {
		assert.Contains(t, props, k)
	}
}

// What the schema refuses, the loader refuses, naming the place and the rule.
func TestParseEnforcesTheSchema(t *testing.T) {
	for name, c := range map[string]struct{ src, where, rule string }{
		"condensed not a boolean":   {"domain: d\nentityTypes: [{name: recipe, table: recipes, condensed: yes please}]", "/entityTypes/0/condensed", "boolean"},
		"detailFields not a list":   {"domain: d\nentityTypes: [{name: recipe, table: recipes, detailFields: instructions}]", "/entityTypes/0/detailFields", "array"},
		"fk without its nameColumn": {"domain: d\nentityTypes: [{name: plan, table: plans, fkFields: [{field: recipe_id, targetType: plan, table: plans}]}]", "/entityTypes/0/fkFields/0", "nameColumn"},
		"a gen_ name":               {"domain: d\nentityTypes: [{name: gen_plan, table: plans}]", "/entityTypes/0/name", "not"},
		"no entity types":           {"domain: d\nentityTypes: []", "/entityTypes", "minItems"},
		"an unknown key":            {"domain: d\nentityTypes: [{name: recipe, table: recipes, contentMarker: [x]}]", "/entityTypes/0", "contentMarker"},
	} {
		_, err := Parse([]byte(c.src))
		require.Error(t, err, name)
		msg := err.Error()
		assert.Contains(t, msg, "does not match domain.schema.json", name)
		assert.Contains(t, msg, c.where, name)
		assert.Contains(t, msg, c.rule, name)
	}
}

// The guide's example domain (docs/domains.md) loads as written.
func TestTheGuidesExampleDomainLoads(t *testing.T) {
	b, err := os.ReadFile("../docs/domains.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(b), "```yaml\n")
	require.True(t, ok, "docs/domains.md has no yaml block")
	src, _, _ := strings.Cut(rest, "```")
	d, err := Parse([]byte(src))
	require.NoError(t, err)
	assert.Equal(t, "crm", d.Name)
	contact, err := d.Type("contact")
	require.NoError(t, err)
	assert.Equal(t, "Ada Lovelace", contact.Label(map[string]any{"first_name": "Ada", "last_name": "Lovelace"}))
	assert.Equal(t, "SUMMARY", contact.DetailLevel(map[string]any{"notes": "x"}))
	note, err := d.Type("note")
	require.NoError(t, err)
	assert.False(t, note.Condensed)
}
