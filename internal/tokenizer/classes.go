package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// class is the set of pre-tokenizer character classes a rune belongs to.
// Each bit is computed with the table regexp2 itself consults, so the
// scanners classify every rune exactly as the patterns do.
type class uint8

const (
	cLetter  class = 1 << iota // \p{L}
	cNumber                    // \p{N}
	cSpace                     // \s, which regexp2 defines as unicode.IsSpace
	cNewline                   // \r or \n
	cUpper                     // o200k's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	cLower                     // o200k's [\p{Ll}\p{Lm}\p{Lo}\p{M}]
)

// classifyRune looks a rune up in the general categories, which are
// disjoint, so it stops at the first that holds it; a test checks it
// against the class definitions for every rune.
func classifyRune(r rune) class {
	switch {
	case unicode.Is(unicode.L, r):
		switch {
		case unicode.Is(unicode.Ll, r):
			return cLetter | cLower
		case unicode.Is(unicode.Lu, r), unicode.Is(unicode.Lt, r):
			return cLetter | cUpper
		default: // Lm or Lo, which o200k puts in both classes
			return cLetter | cUpper | cLower
		}
	case unicode.Is(unicode.M, r):
		return cUpper | cLower
	case unicode.Is(unicode.N, r):
		return cNumber
	case r == '\r' || r == '\n':
		return cSpace | cNewline
	case unicode.IsSpace(r):
		return cSpace
	}
	return 0
}

// asciiClasses spares the table searches for ASCII, where almost all
// prompt text lives.
var asciiClasses = func() (t [utf8.RuneSelf]class) {
	for r := range t {
		t[r] = classifyRune(rune(r))
	}
	return t
}()

// at decodes the rune at byte i of s (i < len(s)) with its classes and
// width. The text is valid UTF-8: Count sends anything else to regexp2.
func at(s string, i int) (rune, class, int) {
	if b := s[i]; b < utf8.RuneSelf {
		return rune(b), asciiClasses[b], 1
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	return r, classifyRune(r), w
}

// classAt is at without the rune, and an empty class past the end, which
// matches no class a scanner asks for.
func classAt(s string, i int) class {
	if i >= len(s) {
		return 0
	}
	_, c, _ := at(s, i)
	return c
}

// runOf returns the end of the run from i of runes having any of want.
func runOf(s string, i int, want class) int {
	for i < len(s) {
		_, c, w := at(s, i)
		if c&want == 0 {
			break
		}
		i += w
	}
	return i
}

// runOfNone returns the end of the run from i of runes having none of bad:
// [^\s\p{L}\p{N}]+ is runOfNone(s, i, cSpace|cLetter|cNumber).
func runOfNone(s string, i int, bad class) int {
	for i < len(s) {
		_, c, w := at(s, i)
		if c&bad != 0 {
			break
		}
		i += w
	}
	return i
}
