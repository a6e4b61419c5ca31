package graph

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/ast"

	"sessiongraph/graph/generated"
)

// Every order field of every connection has the type of its values known,
// so that no connection takes a forged cursor of any shape unchecked.
func TestEveryOrderFieldHasTheTypeOfItsCursorValues(t *testing.T) {
	schema := generated.NewExecutableSchema(generated.Config{}).Schema()
	checked := 0
	for _, def := range schema.Types {
		if def.Kind != ast.Object || strings.HasPrefix(def.Name, "__") {
			continue
		}
		for _, f := range def.Fields {
			orderBy := f.Arguments.ForName("orderBy")
			if !isConnection(&ast.Field{Definition: f}) || orderBy == nil {
				continue
			}
			node := strings.TrimSuffix(f.Type.Name(), "Connection")
			typeOf := orderFieldTypes[node]
			require.NotNil(t, typeOf, "%s.%s: no order field types for %s", def.Name, f.Name, node)
			fields := schema.Types[schema.Types[orderBy.Type.Name()].Fields.ForName("field").Type.Name()]
			for _, v := range fields.EnumValues {
				_, ok := typeOf(v.Name)
				assert.True(t, ok, "%s.%s: %s", def.Name, f.Name, v.Name)
				checked++
			}
		}
	}
	assert.Greater(t, checked, 20)

	session := orderFieldTypes["Session"]
	for field, want := range map[string]reflect.Type{
		"CREATED_AT":   reflect.TypeFor[time.Time](),
		"CURRENT_TURN": reflect.TypeFor[int](),
		"STATUS":       reflect.TypeFor[string](), // an enum, held as its name
	} {
		got, ok := session(field)
		require.True(t, ok, field)
		assert.Equal(t, want, cursorForm(got), field)
	}
}
