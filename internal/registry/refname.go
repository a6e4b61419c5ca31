package registry

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// genPrefix marks refs of generated entities that are not saved yet.
const genPrefix = "gen_"

// typeNamePattern is what an entity type name may look like: lower-case words
// joined by single underscores, not starting with gen_ and not ending in a
// number, so that every ref parses back to exactly one type.
var typeNamePattern = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z][a-z0-9]*)*$`)

// ValidTypeName reports whether name can prefix refs unambiguously.
func ValidTypeName(name string) bool {
	return typeNamePattern.MatchString(name) && !strings.HasPrefix(name, genPrefix) && len(name) <= 100
}

// RefName is the ref of the n-th database entity of a type: recipe_3.
func RefName(entityType string, n int) string {
	return entityType + "_" + strconv.Itoa(n)
}

// GenRefName is the ref of the n-th generated entity of a type: gen_recipe_1.
func GenRefName(entityType string, n int) string {
	return genPrefix + RefName(entityType, n)
}

// ParsedRef is a ref taken apart.
type ParsedRef struct {
	EntityType string
	N          int
	Generated  bool
}

// ParseRef takes a ref apart; ok is false when s is not shaped like a ref
// (it contains an underscore and its last segment is a number).
func ParseRef(s string) (p ParsedRef, ok bool) {
	i := strings.LastIndexByte(s, '_')
	if i <= 0 || i == len(s)-1 {
		return p, false
	}
	n, err := strconv.Atoi(s[i+1:])
	if err != nil || n <= 0 || s[i+1] == '0' || s[i+1] == '+' {
		return p, false
	}
	name := s[:i]
	if rest, gen := strings.CutPrefix(name, genPrefix); gen {
		name, p.Generated = rest, true
	}
	if !ValidTypeName(name) {
		return ParsedRef{}, false
	}
	p.EntityType, p.N = name, n
	return p, true
}

// IsRef reports whether s is shaped like a ref.
func IsRef(s string) bool {
	_, ok := ParseRef(s)
	return ok
}

// uuidLen is the length of UUID-shaped text: 8-4-4-4-12 hex digits
// (36 characters with 4 hyphens).
const uuidLen = 36

// nextUUID returns where the first UUID-shaped text at or after from starts
// in s, or -1. It finds what the pattern
// (?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12} would,
// with no word boundaries (a UUID glued to other text, "<uuid>_large.jpg",
// is found too), but by jumping from hyphen to hyphen: it runs over every
// string of every record inside the session's transaction, where a regexp
// (some 20 MB/s) held the session's lock for a tenth of a second per
// megabyte.
func nextUUID(s string, from int) int {
	for i := from + 8; ; {
		j := strings.IndexByte(s[min(i, len(s)):], '-')
		if j < 0 {
			return -1
		}
		start := i + j - 8 // a UUID's first hyphen is its ninth character
		if start+uuidLen > len(s) {
			return -1
		}
		if isUUIDAt(s, start) {
			return start
		}
		i += j + 1
	}
}

// isUUIDAt reports whether UUID-shaped text starts at s[start].
func isUUIDAt(s string, start int) bool {
	if start < 0 || start+uuidLen > len(s) {
		return false
	}
	for k := range uuidLen {
		c := s[start+k]
		switch k {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !isHex(c) {
				return false
			}
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// replaceUUIDs returns s with each UUID-shaped text replaced by with(it).
func replaceUUIDs(s string, with func(string) string) string {
	var b strings.Builder
	last := 0
	for at := nextUUID(s, 0); at >= 0; at = nextUUID(s, last) {
		b.WriteString(s[last:at])
		b.WriteString(with(s[at : at+uuidLen]))
		last = at + uuidLen
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// ParseUUID returns the UUID s holds, when s is exactly one UUID.
func ParseUUID(s string) (uuid.UUID, bool) {
	if len(s) != uuidLen || !isUUIDAt(s, 0) {
		return uuid.Nil, false
	}
	id, err := uuid.Parse(s)
	return id, err == nil
}

// ContainsUUID reports whether s holds UUID-shaped text anywhere.
func ContainsUUID(s string) bool { return nextUUID(s, 0) >= 0 }
