package compiled

// The values of a compiled page: read from PostgreSQL's text of a text
// array, element by element, without copying, and written as gqlgen
// writes each field's type.

import (
	"errors"
	"strings"

	"sessiongraph/ent"
)

// scratch keeps the slices of values that nested pages read their rows
// into, for the next page of the request (a stack, one in use per depth),
// and the nested pages' texts without their escapes.
type scratch struct {
	free [][]pgValue
	// texts holds every unescaped text of the page one after another:
	// a Builder's bytes once written never change, so each text is a
	// slice of its String and costs no allocation of its own.
	texts strings.Builder
}

// text is v without escapes, as pgValue.text.
func (sc *scratch) text(v pgValue) string {
	if !v.escaped {
		return v.s
	}
	start := sc.texts.Len()
	appendUnescaped(&sc.texts, v.s)
	return sc.texts.String()[start:]
}

// take is a slice of values to read rows into.
func (sc *scratch) take() []pgValue {
	if n := len(sc.free); n > 0 {
		v := sc.free[n-1]
		sc.free = sc.free[:n-1]
		return v[:0]
	}
	return nil
}

// give keeps a slice that take gave, grown or not, for the next take.
func (sc *scratch) give(v []pgValue) { sc.free = append(sc.free, v) }

// pgValue is a value PostgreSQL returned as text. An array's element
// that was quoted keeps its escapes (escaped): the writer drops them as it
// copies, so that reading an array allocates nothing.
type pgValue struct {
	s       string
	valid   bool
	escaped bool
}

// text is the value without escapes.
func (v pgValue) text() string {
	if v.escaped {
		return unescapeElem(v.s)
	}
	return v.s
}

var errCompiledValues = errors.New("compiled read: values not as planned")

// arrayElems reads the one-dimensional text array at the start of s, in
// PostgreSQL's text form (array_out's: elements separated by commas
// between braces; NULL unquoted; an element that is empty, NULL in any
// case, or holds a brace, comma, quote, backslash or space is quoted,
// with its quotes and backslashes escaped by a backslash), appending its
// elements to dst, slices of s. It returns them and what follows the
// closing brace.
func arrayElems(s string, dst []pgValue) ([]pgValue, string, error) {
	if len(s) < 2 || s[0] != '{' {
		return dst, s, errCompiledValues
	}
	s = s[1:]
	if s[0] == '}' {
		return dst, s[1:], nil
	}
	for {
		var v pgValue
		if s[0] == '"' {
			escaped := false
			i := 1
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					escaped = true
					i++
				}
			}
			if i >= len(s) {
				return dst, s, errCompiledValues
			}
			v = pgValue{s: s[1:i], valid: true, escaped: escaped}
			s = s[i+1:]
		} else {
			i := strings.IndexAny(s, ",}")
			if i < 0 {
				return dst, s, errCompiledValues
			}
			if tok := s[:i]; tok != "NULL" {
				v = pgValue{s: tok, valid: true}
			}
			s = s[i:]
		}
		dst = append(dst, v)
		if len(s) == 0 {
			return dst, s, errCompiledValues
		}
		if s[0] == '}' {
			return dst, s[1:], nil
		}
		if s[0] != ',' {
			return dst, s, errCompiledValues
		}
		s = s[1:]
	}
}

// unescapeElem drops the backslash of each escape in a quoted element.
func unescapeElem(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	appendUnescaped(&b, s)
	return b.String()
}

// appendUnescaped writes s to b without the backslash of each escape, the
// runs between escapes at once.
func appendUnescaped(b *strings.Builder, s string) {
	for {
		i := strings.IndexByte(s, '\\')
		if i < 0 || i+1 >= len(s) {
			b.WriteString(s)
			return
		}
		b.WriteString(s[:i])
		b.WriteByte(s[i+1])
		s = s[i+2:]
	}
}

// appendValue appends a value as gqlgen's marshaller of its field's type
// writes it: null for NULL.
func appendValue(b []byte, v pgValue, kind ent.CompiledKind) []byte {
	switch {
	case !v.valid:
		return append(b, "null"...)
	case kind == ent.CompiledString:
		return appendQuoted(b, v.s, v.escaped)
	case kind == ent.CompiledTime:
		// to_json's ISO text, quoted (as an array's element, its quotes
		// escaped), which holds no other quote or backslash: without the
		// quotes, and with the Z of RFC 3339 in UTC.
		q := `"`
		if v.escaped {
			q = `\"`
		}
		b = append(b, '"')
		b = append(b, strings.TrimSuffix(strings.TrimPrefix(v.s, q), q)...)
		return append(b, 'Z', '"')
	case kind == ent.CompiledStringMap:
		return appendGqlgenEscapes(b, v.text())
	}
	return append(b, v.s...) // a number's or a Boolean's text: never escaped
}

const upperHex = "0123456789ABCDEF"

// appendQuoted appends s as a JSON string, escaped as gqlgen's
// MarshalString escapes it: \t, \r, \n, \\ and \" by name, other
// control characters as \u00XX in upper case, everything else as is. Each
// byte that needs escaping is ASCII, so a walk over bytes is one over runes.
// When arrayEscaped, s is an array's quoted element, whose backslashes
// each escape the byte after them (a quote or a backslash).
func appendQuoted(b []byte, s string, arrayEscaped bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '\\' && c != '"' {
			continue
		}
		b = append(b, s[start:i]...)
		if arrayEscaped && c == '\\' && i+1 < len(s) {
			i++
			c = s[i]
		}
		switch c {
		case '\t':
			b = append(b, '\\', 't')
		case '\r':
			b = append(b, '\\', 'r')
		case '\n':
			b = append(b, '\\', 'n')
		case '\\', '"':
			b = append(b, '\\', c)
		default:
			b = append(b, '\\', 'u', '0', '0', upperHex[c>>4], upperHex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendGqlgenEscapes appends JSON that PostgreSQL wrote, spelling its
// string escapes as gqlgen does: PostgreSQL writes a backspace and a form
// feed as \b and \f and other control characters in lower-case hex, gqlgen
// as \u0008, \u000C and upper case. Every backslash in PostgreSQL's JSON
// starts an escape, so a scan from escape to escape is exact.
func appendGqlgenEscapes(b []byte, s string) []byte {
	for {
		i := strings.IndexByte(s, '\\')
		if i < 0 || i+1 >= len(s) {
			return append(b, s...)
		}
		b = append(b, s[:i]...)
		switch s[i+1] {
		case 'b':
			b = append(b, `\u0008`...)
			s = s[i+2:]
		case 'f':
			b = append(b, `\u000C`...)
			s = s[i+2:]
		case 'u':
			end := min(i+6, len(s))
			b = append(b, `\u`...)
			b = append(b, strings.ToUpper(s[i+2:end])...)
			s = s[end:]
		default:
			b = append(b, s[i:i+2]...)
			s = s[i+2:]
		}
	}
}
