package main

import (
	"strconv"
	"strings"
	"unicode"
)

// terminalSafe is s with every character that is not printable (ESC, CR,
// zero-width and bidirectional format characters) and every backslash
// written as a Go escape, so that a name stored before names were checked
// cannot rewrite the operator's terminal.
func terminalSafe(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == ' ' || (unicode.IsPrint(r) && !unicode.Is(unicode.Cf, r)):
			b.WriteRune(r)
		default:
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		}
	}
	return b.String()
}
