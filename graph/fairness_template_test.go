package graph_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/engine"
)

// A label template is a short name: one over the size or placeholder limit
// is refused at upsertEntityType, naming the field, and the type keeps its
// template. (A 6 KB template of placeholders made every recordRead of its
// type hold the session's lock for seconds.)
func TestALabelTemplateOverItsLimitsIsRefused(t *testing.T) {
	s := apitest.New(t)
	upsert := `mutation($t: String!) { upsertEntityType(input: {domain: "kitchen", name: "meal_plan", table: "meal_plans", labelTemplate: $t}) { entityType { labelTemplate } } }`
	for _, tmpl := range []string{
		strings.Repeat("{date}", 1000),                        // 6 KB, thousands of placeholders
		strings.Repeat("{a} ", engine.MaxLabelPlaceholders+1), // few bytes, one placeholder too many
		strings.Repeat("x", engine.MaxLabelTemplateBytes+1),   // no placeholder, too long
	} {
		res := s.Do(t, upsert, map[string]any{"t": tmpl})
		require.Len(t, res.Errors, 1, "%.40s", tmpl)
		assert.Equal(t, "INPUT_TOO_LARGE", res.Errors[0].Code())
		assert.Equal(t, "labelTemplate", res.Errors[0].Extensions["field"])
	}
	res := s.Do(t, `{ entityTypes(domain: "kitchen") { name labelTemplate } }`, nil)
	require.Empty(t, res.Errors)
	assert.Contains(t, string(res.Data), `"labelTemplate":"{date} {meal_type}"`, "the type keeps its template")

	ok := s.Do(t, upsert, map[string]any{"t": strings.Repeat("{date} ", engine.MaxLabelPlaceholders)})
	assert.Empty(t, ok.Errors)
}
