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
// (seed 000: it contains an underscore and its last segment is a number).
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

// uuidPattern finds UUID-shaped text anywhere in a string (seed 000: 36
// characters with 4 hyphens).
// No word boundaries: a UUID glued to other text ("<uuid>_large.jpg") must
// be found too.
var uuidPattern = regexp.MustCompile(`(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// ParseUUID returns the UUID s holds, when s is exactly one UUID.
func ParseUUID(s string) (uuid.UUID, bool) {
	if len(s) != 36 || !uuidPattern.MatchString(s) {
		return uuid.Nil, false
	}
	id, err := uuid.Parse(s)
	return id, err == nil
}

// ContainsUUID reports whether s holds UUID-shaped text anywhere.
func ContainsUUID(s string) bool { return uuidPattern.MatchString(s) }
