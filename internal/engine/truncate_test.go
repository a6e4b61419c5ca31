package engine

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// A computed label is cut to at most the limit, on a rune boundary, with an
// ellipsis; a label within the limit is kept whole.
func TestTruncateCutsALabelOnARuneBoundary(t *testing.T) {
	assert.Equal(t, "Dal", truncate("Dal", 10))
	assert.Equal(t, "abcdefg…", truncate("abcdefghijk", 10))
	// "é" is two bytes: seven bytes of room hold three of them, not three and a half.
	assert.Equal(t, "ééé…", truncate("éééééé", 10))
	huge := strings.Repeat("漢", 1900<<10/3)
	cut := truncate(huge, maxLabelLen)
	assert.Equal(t, strings.Repeat("漢", (maxLabelLen-len("…"))/3)+"…", cut)
	assert.LessOrEqual(t, len(cut), maxLabelLen)
}
