package tokenizer

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apperr"
)

func TestParseAcceptsKnownNamesInAnyCase(t *testing.T) {
	cases := map[string]Name{
		"cl100k_base":    CL100K,
		"CL100K_BASE":    CL100K,
		" o200k_base\n":  O200K,
		"O200k_Base":     O200K,
		"chars4":         Chars4,
		"CHARS4":         Chars4,
		"\tcl100k_base ": CL100K,
	}
	for in, want := range cases {
		got, err := Parse(in)
		require.NoError(t, err, "input %q", in)
		assert.Equal(t, want, got, "input %q", in)
	}
}

func TestParseRejectsUnknownNamesListingTheValidOnes(t *testing.T) {
	for _, in := range []string{"", "cl100k", "gpt-4o", "p50k_base", "chars"} {
		got, err := Parse(in)
		require.Error(t, err, "input %q", in)
		assert.Equal(t, Name(""), got)
		assert.Equal(t, apperr.BadUserInput, apperr.CodeOf(err))
		assert.Contains(t, err.Error(), "use one of cl100k_base, o200k_base, chars4")
	}
	_, err := Parse("gpt-4o")
	assert.EqualError(t, err, `unknown tokenizer "gpt-4o": use one of cl100k_base, o200k_base, chars4`)
}

func TestKnownListsDefaultFirstAndIsACopy(t *testing.T) {
	assert.Equal(t, CL100K, Default)
	names := Known()
	assert.Equal(t, []Name{CL100K, O200K, Chars4}, names)
	names[0] = "mutated"
	assert.Equal(t, CL100K, Known()[0])
}

func TestGetRejectsUnknownNames(t *testing.T) {
	c, err := Get("p50k_base")
	assert.Nil(t, c)
	assert.Equal(t, apperr.BadUserInput, apperr.CodeOf(err))
	assert.EqualError(t, err, `unknown tokenizer "p50k_base": use one of cl100k_base, o200k_base, chars4`)
	assert.NotErrorIs(t, err, ErrFellBack)
}

// TestChars4CountsWholeGroupsOfFourRunes: the chat-memory estimate, length
// / 4 rounded down (41 characters are 10 tokens), in runes, not bytes.
func TestChars4CountsWholeGroupsOfFourRunes(t *testing.T) {
	c, err := Get(Chars4)
	require.NoError(t, err)
	assert.Equal(t, Chars4, c.Name())

	cases := []struct {
		text string
		want int
	}{
		{"", 0},
		{"a", 0},
		{"abc", 0},
		{"abcd", 1},
		{"abcde", 1},
		{"abcdefgh", 2},
		{"abcdefghi", 2},
		{strings.Repeat("x", 41), 10},
		// Four runes but twelve bytes: one token, not three.
		{"世界你好", 1},
		{"世界你好!", 1},
		// Each emoji is one rune of four bytes.
		{"🎉🎉🎉🎉", 1},
		{"naïve", 1},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, c.Count(tc.text), "text %q", tc.text)
	}
}
