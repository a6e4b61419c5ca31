package app

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The slots are sized from the cores unless set: two per core, and as
// many for a key but never all of several; a setting wins.
func TestOperationSlotsAreSizedFromTheCores(t *testing.T) {
	for _, c := range []struct{ size, keyMost, cores, wantSize, wantKey int }{
		{0, 0, 2, 4, 3},
		{0, 0, 1, 2, 1},
		{0, 0, 16, 32, 31},
		{3, 0, 8, 3, 2},
		{1, 0, 8, 1, 1},
		{6, 9, 2, 6, 6},
		{0, 3, 2, 4, 3},
	} {
		size, keyMost := slotSizes(c.size, c.keyMost, c.cores)
		assert.Equal(t, [2]int{c.wantSize, c.wantKey}, [2]int{size, keyMost}, "%+v", c)
	}
}
