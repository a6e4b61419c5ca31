package tokenizer

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFailedLoadFallsBackToChars4AndSaysSo(t *testing.T) {
	loads := 0
	encs := newEncodings(func(Name) (Counter, error) {
		loads++
		return nil, errors.New("rank file truncated")
	})

	for range 2 {
		c, err := encs.get(O200K)
		require.ErrorIs(t, err, ErrFellBack)
		assert.EqualError(t, err, "tokenizer o200k_base: BPE encoding unavailable, counting with chars4: rank file truncated")
		require.NotNil(t, c, "callers must still be able to count")
		assert.Equal(t, Chars4, c.Name(), "stored counts must be labelled with what produced them")
		assert.Equal(t, 2, c.Count("abcdefghi"))
	}
	assert.Equal(t, 1, loads, "a failed load is not retried")

	// Chars4 loads nothing, so it never falls back.
	_, err := encs.get(Chars4)
	assert.NoError(t, err)
}

func TestPanickingLoadFallsBackInsteadOfLeavingAnEmptySlot(t *testing.T) {
	encs := newEncodings(func(Name) (Counter, error) {
		var ranks []string
		_ = ranks[1] // what a malformed rank line does to the parser
		return nil, nil
	})

	for range 2 {
		c, err := encs.get(CL100K)
		require.ErrorIs(t, err, ErrFellBack)
		assert.Contains(t, err.Error(), "loading cl100k_base panicked: runtime error: index out of range")
		require.NotNil(t, c)
		assert.Equal(t, 1, c.Count("abcd"))
	}
}
