// Package jsontext finds text in a JSON document that is not valid UTF-8
// before a decoder hides it: encoding/json turns invalid bytes, overlong
// forms and lone surrogate escapes (\ud800) into U+FFFD, so that two
// different inputs would decode to one string (and open one session).
package jsontext

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxKeyInPath bounds how much of an odd key a path quotes.
const maxKeyInPath = 120

// InvalidText returns the path ("variables.in.externalKey", "query",
// "items[2]") of the first string or key in doc that is not valid UTF-8,
// and whether there is one. doc must be valid JSON syntax (a decoder has
// read it); what it cannot follow it reports as no path.
func InvalidText(doc []byte) (string, bool) {
	s := scanner{b: doc}
	s.value()
	return s.path(), s.bad
}

type scanner struct {
	b   []byte
	i   int
	at  []segment // the path
	bad bool
}

// segment is a step of the path: a key, quoted as the document has it
// (decoded only for a path that is reported), or else an index.
type segment struct {
	key   []byte
	index int
}

func (s *scanner) ws() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

// value scans one value; it stops at the first invalid text.
func (s *scanner) value() {
	s.ws()
	if s.i >= len(s.b) || s.bad {
		return
	}
	switch s.b[s.i] {
	case '{':
		s.i++
		for !s.bad {
			s.ws()
			if s.i >= len(s.b) || s.b[s.i] == '}' {
				s.i++
				return
			}
			if s.b[s.i] == ',' {
				s.i++
				continue
			}
			raw := s.str()
			s.at = append(s.at, segment{key: raw})
			if !valid(raw) {
				s.bad = true
				return
			}
			s.ws()
			s.i++ // ':'
			s.value()
			if s.bad {
				return
			}
			s.at = s.at[:len(s.at)-1]
		}
	case '[':
		s.i++
		for n := 0; !s.bad; {
			s.ws()
			if s.i >= len(s.b) || s.b[s.i] == ']' {
				s.i++
				return
			}
			if s.b[s.i] == ',' {
				s.i++
				n++
				continue
			}
			s.at = append(s.at, segment{index: n})
			s.value()
			if s.bad {
				return
			}
			s.at = s.at[:len(s.at)-1]
		}
	case '"':
		if !valid(s.str()) {
			s.bad = true
		}
	default: // a number, true, false or null
		for s.i < len(s.b) && !strings.ContainsRune(",]} \t\r\n", rune(s.b[s.i])) {
			s.i++
		}
	}
}

// str scans a string at s.i and returns it with its quotes.
func (s *scanner) str() []byte {
	start := s.i
	s.i++ // the opening quote
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '\\':
			s.i += 2
			continue
		case '"':
			s.i++
			return s.b[start:s.i]
		}
		s.i++
	}
	return s.b[start:]
}

// valid reports whether a quoted JSON string is UTF-8 once decoded: no
// invalid byte sequence (overlong forms and encoded surrogates included)
// and no \u escape of half a surrogate pair.
func valid(raw []byte) bool {
	for i := 1; i < len(raw)-1; {
		c := raw[i]
		switch {
		case c == '\\' && i+1 < len(raw) && raw[i+1] == 'u':
			r, ok := hex4(raw, i+2)
			if !ok {
				return false
			}
			i += 6
			if utf16.IsSurrogate(r) {
				low, ok := hex4(raw, i+2)
				if r >= 0xDC00 || i+1 >= len(raw) || raw[i] != '\\' || raw[i+1] != 'u' || !ok ||
					utf16.DecodeRune(r, low) == utf8.RuneError {
					return false
				}
				i += 6
			}
		case c == '\\':
			i += 2
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && size <= 1 {
				return false
			}
			i += size
		}
	}
	return true
}

func hex4(raw []byte, at int) (rune, bool) {
	if at+4 > len(raw) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(raw[at:at+4]), 16, 32)
	return rune(n), err == nil
}

func (s *scanner) path() string {
	if !s.bad {
		return ""
	}
	var b strings.Builder
	for _, seg := range s.at {
		switch {
		case seg.key == nil:
			fmt.Fprintf(&b, "[%d]", seg.index)
		default:
			var k string
			_ = json.Unmarshal(seg.key, &k)
			if name(k) {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(k)
				continue
			}
			if len(k) > maxKeyInPath {
				cut := maxKeyInPath
				for cut > 0 && !utf8.RuneStart(k[cut]) {
					cut--
				}
				k = k[:cut] + "…"
			}
			fmt.Fprintf(&b, "[%s]", strconv.QuoteToASCII(k))
		}
	}
	return b.String()
}

// name reports whether k reads well after a dot.
func name(k string) bool {
	if k == "" || len(k) > 64 {
		return false
	}
	for i, r := range k {
		if r != '_' && !(r >= 'a' && r <= 'z') && !(r >= 'A' && r <= 'Z') && (i == 0 || !(r >= '0' && r <= '9')) {
			return false
		}
	}
	return true
}

// Refusal is the message every door answers for text at path that is not
// UTF-8, so that GraphQL and MCP say the same words.
func Refusal(path string) string {
	return path + " is not valid UTF-8 (an invalid byte, an overlong form or half a surrogate pair): send UTF-8 text"
}
