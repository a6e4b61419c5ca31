package tokenizer

import "unicode/utf8"

// chars4Counter applies the 4-characters rule of the chat-memory estimate:
// a token per whole group of four runes (length / 4, rounded down). It needs
// no data, so it is also the fallback when BPE fails.
type chars4Counter struct{}

// Count returns floor(runes/4): 41 characters are 10 tokens. Runes, not
// bytes, so that non-Latin text is not counted three or four times over.
func (chars4Counter) Count(text string) int {
	return utf8.RuneCountInString(text) / 4
}

// Name returns Chars4.
func (chars4Counter) Name() Name { return Chars4 }
