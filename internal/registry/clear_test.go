package registry_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apperr"
	"sessiongraph/internal/registry"
)

// Clearing a pending artifact: a pending artifact is discarded and a
// promoted one is done with; either keeps its content, and its ref. A
// discarded one is read back from the archive, a saved one from the
// database.
func TestClearArtifactKeepsTheContentInTheArchive(t *testing.T) {
	d := kitchen(t)
	recipe := typeOf(t, d, "recipe")
	r := registry.New(2, nil, nil)
	discarded := r.Generate(recipe, simpleCod(), "", intp(1))
	saved := r.Generate(recipe, simpleCodWithFeta(), "", intp(1))
	_, err := r.Create(recipe, uuid.New(), "", saved.Ref, intp(2))
	require.NoError(t, err)
	r = registry.New(2, r.Counters, r.GenCounters, discarded, saved)

	for _, ref := range []string{"gen_recipe_1", "gen_recipe_2"} {
		e, err := r.ClearArtifact(ref)
		require.NoError(t, err)
		assert.Equal(t, registry.ArtifactCleared, e.Artifact.Status)
	}
	assert.Equal(t, simpleCod(), discarded.Artifact.Content)
	assert.Equal(t, "generated", discarded.Action)
	assert.Equal(t, "created", saved.Action)
	assert.Equal(t, []string{"gen_recipe_1", "gen_recipe_2"}, refsOf(r.Changed()))

	records, fromDatabase, err := r.ReadRefs(d, []string{"gen_recipe_1", "gen_recipe_2"})
	require.NoError(t, err)
	want := simpleCod()
	want["id"] = "gen_recipe_1"
	assert.Equal(t, []map[string]any{want}, records, "never saved: only the archive has it")
	assert.Equal(t, []string{"gen_recipe_2"}, fromDatabase, "saved: the database row is the truth")
}

func TestClearArtifactRefusesWhatHasNoArtifactLeft(t *testing.T) {
	d := kitchen(t)
	recipe := typeOf(t, d, "recipe")
	r := registry.New(1, nil, nil)
	r.Generate(recipe, simpleCod(), "", nil)
	_, err := r.Read(d, recipe, []map[string]any{{"id": uuid.NewString(), "name": "Dal"}}, registry.ActionRead, nil)
	require.NoError(t, err)
	_, err = r.ClearArtifact("gen_recipe_1")
	require.NoError(t, err)

	for ref, code := range map[string]apperr.Code{
		"gen_recipe_1": apperr.ArtifactCleared,
		"gen_recipe_2": apperr.RefNotFound,
		"recipe_1":     apperr.BadUserInput,
	} {
		_, err := r.ClearArtifact(ref)
		requireCode(t, err, code)
	}
}
