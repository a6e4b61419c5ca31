package tokenizer

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A section counted again answers from the cache with the same count, and a
// count cut short by its request's end is never remembered as the text's.
func TestRememberedCountsAreWholeCounts(t *testing.T) {
	c, err := Get(CL100K)
	require.NoError(t, err)
	b := c.(bpeCounter)
	section := "## Active entities\n" + strings.Repeat("- recipe_12: Leek and potato soup (read, turn 3)\n", 40)
	fresh, whole := b.countPieces(section, nil)
	require.True(t, whole)
	assert.Equal(t, fresh, c.Count(section))
	remembered, ok := b.counts.get(section)
	require.True(t, ok)
	assert.Equal(t, fresh, remembered)
	assert.Equal(t, fresh, c.Count(section))

	other := strings.Repeat("a fresh text that no build counted before ", 2000)
	ended := make(chan struct{})
	close(ended)
	assert.Equal(t, 0, b.countUntil(other, ended))
	_, ok = b.counts.get(other)
	assert.False(t, ok, "a count the request's end cut short is not the text's count")
	assert.Equal(t, 1, c.Count("short"), "texts too short to remember are counted")
}
