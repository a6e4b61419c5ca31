package tokenizer

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The scanners must split and count exactly as tiktoken-go with regexp2
// did; these tests compare the two paths text by text.

func TestClassesMatchThePatternDefinitionsForEveryRune(t *testing.T) {
	in := func(r rune, tables ...*unicode.RangeTable) bool { return unicode.IsOneOf(tables, r) }
	for r := rune(0); r <= unicode.MaxRune; r++ {
		var want class
		if in(r, unicode.L) {
			want |= cLetter
		}
		if in(r, unicode.N) {
			want |= cNumber
		}
		if unicode.IsSpace(r) {
			want |= cSpace
		}
		if r == '\r' || r == '\n' {
			want |= cNewline
		}
		if in(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo, unicode.M) {
			want |= cUpper
		}
		if in(r, unicode.Ll, unicode.Lm, unicode.Lo, unicode.M) {
			want |= cLower
		}
		if got := classifyRune(r); got != want {
			t.Fatalf("%U: class %06b, want %06b", r, got, want)
		}
	}
}

func TestScannersCountFixedTextsAsRegexpDid(t *testing.T) {
	texts := []string{
		"'s", "'S", "'sup", "'RE'Ve'm'LL'd", "it's", "IT'S", "don't", "DON'T", "Don'T", "we'll've",
		"'", "''", "x'", "' s", "'ſ", "ǅungla", "ǅ'S", "ÀÉÎ'll", "ABCdef", "abcDEF", "aBcDeF",
		"e\u0301", "E\u0301\u0301x", "\u0301", ".\u0301", "..\u0301", " \u0301x", "ʰʰA", "ʰA", "Aʰ", "Aʰ.",
		"ああ'S", "ー'd", "Ⅻ½²٣", "١٢٣٤٥", "12345678", "x1234", " 1", "  \n", "a  b", "a \t b",
		"\n\n##", "done.\n\n## Next", "  \n  x", "\r\n\r\n", " \r\n ", "x \n", "x  ", "\t.", " .", "  .",
		"./\n/\n/x", "a/b//c\n", "http://example.com/a/b\n", "\u00a0word", "\u0085x", "\u2028\u3000y",
		"\v\fz", "\x00\x1f", "👍🏽👨‍👩‍👧🇫🇷", "Привет, МИР!", "مرحبا ١٢٣", "<|endoftext|>", "\uFEFFbom",
		"\xff\xfe", "ok\xffok", "\xe2\x82", // invalid UTF-8 takes the regexp2 path
		strings.Repeat("a", 1200), strings.Repeat(" ", 1200) + "x", strings.Repeat("/\n", 700),
		strings.Repeat("é", 700), strings.Repeat("1", 2000), strings.Repeat(".", 1100) + "\n\n",
	}
	for _, tc := range knownCounts {
		texts = append(texts, tc.text)
	}
	for _, s := range []string{"abcde", "世界你好!", "🎉🎉🎉🎉", "naïve", "x    y", "=====", "1234567"} {
		texts = append(texts, s)
	}
	assertSameCounts(t, texts, 1)
}

func TestScannersCountRandomTextsAsRegexpDid(t *testing.T) {
	size, checkEvery := 20_000, 20
	if raceEnabled {
		size = 2_000 // the race detector makes regexp2 ten times slower
	}
	rng := rand.New(rand.NewPCG(7, 11))
	texts := make([]string, size)
	for i := range texts {
		texts[i] = randomText(rng)
	}
	assertSameCounts(t, texts, checkEvery)
}

func TestScannersCountPromptsAsRegexpDid(t *testing.T) {
	texts := slices.Clone(prompts)
	// Recombine their lines, so that every kind of line meets every other.
	var lines []string
	for _, p := range prompts {
		lines = append(lines, strings.SplitAfter(p, "\n")...)
	}
	rng := rand.New(rand.NewPCG(3, 5))
	for range 500 {
		var b strings.Builder
		for range 1 + rng.IntN(30) {
			b.WriteString(lines[rng.IntN(len(lines))])
		}
		texts = append(texts, b.String())
	}
	assertSameCounts(t, texts, 1)
}

// assertSameCounts compares Count with countWithRegex for both encodings
// on every text, and on every checkEvery-th text also the scanner's pieces.
func assertSameCounts(t *testing.T, texts []string, checkEvery int) {
	t.Helper()
	for _, name := range []Name{CL100K, O200K} {
		c, err := Get(name)
		require.NoError(t, err)
		b := c.(bpeCounter)
		require.NotNil(t, b.ranks, "%s has no scanner", name)
		failures := 0
		for i, text := range texts {
			if got, want := b.Count(text), b.countWithRegex(text); got != want {
				assert.Equal(t, want, got, "%s %q", name, text)
				failures++
			}
			if i%checkEvery == 0 {
				for seg := range segments(text, maxRun) {
					if !assertSamePieces(t, b, seg) {
						failures++
					}
				}
			}
			if failures >= 10 {
				t.Fatalf("%s: stopping after 10 failures", name)
			}
		}
	}
}

// assertSamePieces checks that the scanner's pieces, encoded one by one,
// give the very tokens tiktoken gives for the whole segment.
func assertSamePieces(t *testing.T, b bpeCounter, seg string) bool {
	t.Helper()
	if !utf8.ValidString(seg) {
		return true
	}
	tokens := []int{}
	for i := 0; i < len(seg); {
		end := b.pieceEnd(seg, i)
		if !assert.Greater(t, end, i, "%s %q: empty piece at %d", b.name, seg, i) {
			return false
		}
		piece := b.enc.EncodeOrdinary(seg[i:end])
		if !assert.Len(t, piece, pieceTokens(seg[i:end], b.ranks, new(mergeCache)), "%s piece %q", b.name, seg[i:end]) {
			return false
		}
		tokens = append(tokens, piece...)
		i = end
	}
	return assert.Equal(t, b.enc.EncodeOrdinary(seg), tokens, "%s %q", b.name, seg)
}

// fragments are what random texts are made of: every class the patterns
// tell apart, the contractions in mixed case, and the runes whose class is
// easy to get wrong (titlecase, modifier letters, marks, unusual spaces).
var fragments = []string{
	"a", "b", "z", "Q", "X", "the", "The", "THE", "camelCase", "snake_case", "HTTPServer", "iPhone",
	"0", "7", "42", "2026", "3.14", "1,000",
	".", ",", ";", ":", "!", "?", "(", ")", "[", "]", "{", "}", "<", ">", "/", "\\", "|", "@", "#",
	"$", "%", "^", "&", "*", "-", "_", "=", "+", "~", "`", "\"", "...", "->", "//", "/*", "**", "##",
	" ", " ", " ", "  ", "\t", "\r", "\n", "\r\n", "\n\n", "\v", "\f",
	"'", "'s", "'S", "'t", "'T", "'re", "'RE", "'Re", "'rE", "'ve", "'VE", "'m", "'M", "'ll", "'LL",
	"'lL", "'d", "'D", "n't", "N'T",
	"é", "É", "ñ", "Ü", "ß", "ø", "naïve", "Ångström", "e\u0301", "E\u0308", "\u0301", "\u20dd",
	"\u0903", "ǅ", "ǈ", "ʰ", "ー", "ゝ", "あ", "世界", "日本語", "한국어", "ไทย",
	"🎉", "👍🏽", "👨\u200d👩\u200d👧", "🇫🇷", "\ufe0f", "\u200b", "\u200d",
	"Привет", "МИР", "ё", "٠", "١٢٣", "۴", "مرحبا", "العربية", "Ⅻ", "½", "²", "௰",
	"\u00a0", "\u0085", "\u1680", "\u2003", "\u2028", "\u2029", "\u202f", "\u3000", "\x00", "\x1f", "\u00ad",
}

func randomText(rng *rand.Rand) string {
	var b strings.Builder
	for range rng.IntN(60) {
		b.WriteString(fragments[rng.IntN(len(fragments))])
	}
	return b.String()
}
