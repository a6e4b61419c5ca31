package schema_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The data model depends on nothing of the server's: the types its JSON and
// enum columns store live in schematype, which the engine, the prompt
// formatter and the API import in turn.
func TestTheDataModelImportsNoServerPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "sessiongraph/ent/schema").CombinedOutput()
	require.NoError(t, err, "%s", out)
	deps := strings.Fields(string(out))
	assert.Contains(t, deps, "sessiongraph/ent/schema/schematype", "go list listed the dependencies")
	for _, dep := range deps {
		assert.False(t, strings.HasPrefix(dep, "sessiongraph/internal/") || strings.HasPrefix(dep, "sessiongraph/graph"),
			"ent/schema depends on %s", dep)
	}
}
