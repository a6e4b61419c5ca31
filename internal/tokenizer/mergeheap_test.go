package tokenizer

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The heap merge leaves as many tokens as the plain merge, which follows
// tiktoken's order, for pieces of every length and kind: letters, one
// letter repeated, digits, multi-byte text, arbitrary bytes.
func TestHeapMergeCountsWhatThePlainMergeCounts(t *testing.T) {
	for _, name := range []Name{CL100K, O200K} {
		c, err := Get(name)
		require.NoError(t, err)
		ranks := c.(bpeCounter).ranks
		rnd := rand.New(rand.NewPCG(13, uint64(len(name))))
		alphabets := []string{"abcdefghijklmnopqrstuvwxyz", "a", "ab", "0123456789", "éàü漢字🎉", "\x00\x01\xfe\xff-_/+="}
		for range 3000 {
			alphabet := []rune(alphabets[rnd.IntN(len(alphabets))])
			var b strings.Builder
			for range 2 + rnd.IntN(300) {
				b.WriteRune(alphabet[rnd.IntN(len(alphabet))])
			}
			piece := b.String()
			require.Equal(t, mergedLen(piece, ranks), mergedLenHeap(piece, ranks), "%s: %q", name, piece)
		}
	}
}
