package access

import (
	"unicode"
	"unicode/utf8"

	"sessiongraph/internal/apperr"
)

// MaxNameBytes bounds a key's name and a tenant's name.
const MaxNameBytes = 200

// CheckName refuses a name (of a key, of a tenant) that is empty, longer
// than MaxNameBytes, not UTF-8, or holds a character that does not show:
// a control character (ESC and CR rewrite an operator's terminal), a format
// character (zero-width spaces, bidirectional overrides), a line or
// paragraph separator, a private-use or unassigned code point. Two names
// that look the same must be the same name.
func CheckName(field, v string) error {
	switch {
	case v == "":
		return apperr.Invalid(field, "%s must not be empty", field)
	case len(v) > MaxNameBytes:
		return apperr.TooLarge(field, "%s is %d bytes long; at most %d are allowed", field, len(v), MaxNameBytes)
	case !utf8.ValidString(v):
		return apperr.Invalid(field, "%s is not valid UTF-8", field)
	}
	for i, r := range v {
		if invisible(r) {
			return apperr.Invalid(field, "%s holds the invisible or control character %U at byte %d: names must show every character they hold", field, r, i)
		}
	}
	return nil
}

// invisible reports a character that a name must not hold.
func invisible(r rune) bool {
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Zl, unicode.Zp) ||
		(r != ' ' && unicode.Is(unicode.Zs, r)) || !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Zs)
}
