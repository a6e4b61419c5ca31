package tokenizer

import (
	"iter"
	"unicode"
)

// maxRun is the longest run of letters, spaces or symbols encoded in one
// piece. tiktoken-go merges a piece in time quadratic in its length, so a
// turn of 40,000 "a"s takes over a second and a megabyte takes minutes;
// no natural word or indentation comes near 500 runes, so ordinary text
// is never cut.
const maxRun = 500

// runClass groups runes the way the cl100k and o200k patterns split text,
// coarsely: every pre-token lies within one run of a class (or a symbol run
// followed by a newline run), so cutting long runs bounds every piece.
type runClass uint8

const (
	letters runClass = iota // letters and combining marks
	spaces
	digits // never cut: the patterns already take at most three at a time
	symbols
)

func classOf(r rune) runClass {
	switch {
	case unicode.IsLetter(r), unicode.IsMark(r):
		return letters
	case unicode.IsSpace(r):
		return spaces
	case unicode.IsNumber(r):
		return digits
	default:
		return symbols
	}
}

// segments yields text in pieces that contain no run longer than limit:
// the whole text when it has none, which is the usual case and keeps the
// count exact. Each cut inside a long run can shift the count by a token
// or two, a fair price for counting in linear time.
func segments(text string, limit int) iter.Seq[string] {
	return func(yield func(string) bool) {
		start, run, class := 0, 0, runClass(255)
		for i, r := range text {
			if c := classOf(r); c != class {
				class, run = c, 0
			}
			run++
			if run > limit && class != digits {
				if !yield(text[start:i]) {
					return
				}
				start, run = i, 1
			}
		}
		yield(text[start:])
	}
}
