package tokenizer

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSegmentsCutOnlyRunsLongerThanTheLimit(t *testing.T) {
	cut := func(text string) []string { return slices.Collect(segments(text, 3)) }

	assert.Equal(t, []string{""}, cut(""))
	assert.Equal(t, []string{"abc def ghi"}, cut("abc def ghi"))
	assert.Equal(t, []string{"aaa", "aaa", "a"}, cut("aaaaaaa"))
	assert.Equal(t, []string{"x   ", " y"}, cut("x    y"))
	assert.Equal(t, []string{"===", "=="}, cut("====="))
	// Digits are taken three at a time by the patterns, so a run of them is
	// already cheap and is left whole.
	assert.Equal(t, []string{"1234567"}, cut("1234567"))
	// Runes, not bytes: four CJK characters are twelve bytes.
	assert.Equal(t, []string{"世界你", "好"}, cut("世界你好"))
}

func TestOrdinaryTextIsCountedInOnePiece(t *testing.T) {
	long := strings.Repeat(paragraph, 50)
	assert.Equal(t, []string{long}, slices.Collect(segments(long, maxRun)))

	// Exact counts for 100 KB of prose, unchanged by the run guard.
	for name, want := range map[Name]int{CL100K: 19951, O200K: 19901} {
		c, err := Get(name)
		require.NoError(t, err)
		assert.Equal(t, want, c.Count(long), "%s", name)
	}
}

func TestLongRunsAreCutSoCountingStaysLinear(t *testing.T) {
	// Uncut, 20,000 "a"s are exactly 2,500 tokens and 20,000 spaces 157, and
	// each takes a quarter of a second; 100 KB takes ten. Cut,
	// they cost a token or two per 500 runes more and take milliseconds.
	cases := []struct {
		text          string
		cl100k, o200k int
	}{
		{strings.Repeat("a", 20_000), 2520, 2520},
		{strings.Repeat(" ", 20_000), 200, 200},
		{strings.Repeat("a", 200_000), 25_200, 25_200},
	}
	for _, name := range []Name{CL100K, O200K} {
		c, err := Get(name)
		require.NoError(t, err)
		for _, tc := range cases {
			want := map[Name]int{CL100K: tc.cl100k, O200K: tc.o200k}[name]
			assert.Equal(t, want, c.Count(tc.text), "%s %.10q x %d", name, tc.text, len(tc.text))
		}
	}
}
