package tokenizer

import "unicode/utf8"

// chars4Counter applies the 4-characters rule: a token per started group of
// four runes. It needs no data, so it is also the fallback when BPE fails.
type chars4Counter struct{}

// Count returns ceil(runes/4); runes, not bytes, so that non-Latin text is
// not counted three or four times over.
func (chars4Counter) Count(text string) int {
	return (utf8.RuneCountInString(text) + 3) / 4
}

// Name returns Chars4.
func (chars4Counter) Name() Name { return Chars4 }
