package tokenizer

import "unicode"

// A pieceEnd returns where the pre-token starting at byte i of s ends
// (i < len(s)). It reproduces one encoding's pattern as regexp2 runs it:
// alternatives tried in order at i, each quantifier greedy and given back
// one rune at a time. Every rune starts some alternative's match, so the
// pieces tile the text and tiktoken's search never skips a rune.
type pieceEnd func(s string, i int) int

// Pre-tokenizer patterns, as tiktoken-go v0.1.8 compiles them:
//
//	cl100k: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//	        ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//	o200k:  [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
//	        [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
//	        \p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+

// notPrefix is what [^\r\n\p{L}\p{N}] excludes; notSymbol is what
// [^\s\p{L}\p{N}] excludes.
const (
	notPrefix = cNewline | cLetter | cNumber
	notSymbol = cSpace | cLetter | cNumber
)

// cl100kPieceEnd follows the cl100k_base pattern's alternatives in order.
func cl100kPieceEnd(s string, i int) int {
	r, c, w := at(s, i)
	if r == '\'' {
		if n := contraction(s, i+w); n > 0 {
			return i + w + n
		}
	}
	if c&notPrefix == 0 && classAt(s, i+w)&cLetter != 0 {
		return runOf(s, i+w, cLetter)
	}
	if c&cLetter != 0 {
		return runOf(s, i, cLetter)
	}
	if c&cNumber != 0 {
		return digitsEnd(s, i)
	}
	if end := symbolsEnd(s, i, cNewline, 0); end > i {
		return end
	}
	return spacesEnd(s, i)
}

// o200kPieceEnd follows the o200k_base pattern's alternatives in order;
// each word alternative tries its optional prefix before going without.
func o200kPieceEnd(s string, i int) int {
	_, c, w := at(s, i)
	prefixed := c&notPrefix == 0
	if prefixed {
		if end := lowerWordEnd(s, i+w); end > 0 {
			return end
		}
	}
	if end := lowerWordEnd(s, i); end > 0 {
		return end
	}
	if prefixed {
		if end := upperWordEnd(s, i+w); end > 0 {
			return end
		}
	}
	if end := upperWordEnd(s, i); end > 0 {
		return end
	}
	if c&cNumber != 0 {
		return digitsEnd(s, i)
	}
	if end := symbolsEnd(s, i, cNewline, '/'); end > i {
		return end
	}
	return spacesEnd(s, i)
}

// lowerWordEnd matches [Upper]*[Lower]+ and an optional contraction at p,
// returning 0 when it cannot. When the first rune after the Upper run is
// not Lower, the backtracking engine gives back Upper runes until one is
// also Lower (Lm, Lo or M), and that one rune is the whole Lower part.
func lowerWordEnd(s string, p int) int {
	q, lastBoth := p, -1
	for q < len(s) {
		_, c, w := at(s, q)
		if c&cUpper == 0 {
			break
		}
		q += w
		if c&cLower != 0 {
			lastBoth = q
		}
	}
	end := lastBoth
	if classAt(s, q)&cLower != 0 {
		end = runOf(s, q, cLower)
	}
	if end < 0 {
		return 0
	}
	return withContraction(s, end)
}

// upperWordEnd matches [Upper]+[Lower]* and an optional contraction at p,
// returning 0 when it cannot.
func upperWordEnd(s string, p int) int {
	if classAt(s, p)&cUpper == 0 {
		return 0
	}
	q := runOf(s, p, cUpper)
	return withContraction(s, runOf(s, q, cLower))
}

// withContraction extends a word ending at end by a contraction after it.
func withContraction(s string, end int) int {
	if end < len(s) && s[end] == '\'' {
		if n := contraction(s, end+1); n > 0 {
			return end + 1 + n
		}
	}
	return end
}

// contraction returns the length of (?i:s|t|re|ve|m|ll|d) at i, or 0.
// regexp2 compares case-insensitively by unicode.ToLower, so this does too.
func contraction(s string, i int) int {
	if i >= len(s) {
		return 0
	}
	r, _, w := at(s, i)
	switch unicode.ToLower(r) {
	case 's', 't', 'm', 'd':
		return w
	case 'r', 'v':
		if i+w < len(s) {
			if r2, _, w2 := at(s, i+w); unicode.ToLower(r2) == 'e' {
				return w + w2
			}
		}
	case 'l':
		if i+w < len(s) {
			if r2, _, w2 := at(s, i+w); unicode.ToLower(r2) == 'l' {
				return w + w2
			}
		}
	}
	return 0
}

// digitsEnd matches \p{N}{1,3} at a number.
func digitsEnd(s string, i int) int {
	for range 3 {
		if classAt(s, i)&cNumber == 0 {
			break
		}
		_, _, w := at(s, i)
		i += w
	}
	return i
}

// symbolsEnd matches " ?[^\s\p{L}\p{N}]+" followed by any run of runes in
// trail or equal to extra (0 for none), returning i when it cannot.
func symbolsEnd(s string, i int, trail class, extra rune) int {
	j := i
	if s[j] == ' ' {
		j++
	}
	if j >= len(s) || classAt(s, j)&notSymbol != 0 {
		return i
	}
	j = runOfNone(s, j, notSymbol)
	for j < len(s) {
		r, c, w := at(s, j)
		if c&trail == 0 && (extra == 0 || r != extra) {
			break
		}
		j += w
	}
	return j
}

// spacesEnd matches the three whitespace alternatives at a space:
// \s*[\r\n]+ ends at the run's last newline; \s+(?!\S) takes the run, or
// all of it but its last rune when a non-space follows; \s+ takes the rest.
func spacesEnd(s string, i int) int {
	j, last, lastNewline := i, i, -1
	for j < len(s) {
		_, c, w := at(s, j)
		if c&cSpace == 0 {
			break
		}
		last = j
		j += w
		if c&cNewline != 0 {
			lastNewline = j
		}
	}
	switch {
	case lastNewline >= 0:
		return lastNewline
	case j == len(s) || last == i:
		return j
	default:
		return last
	}
}
