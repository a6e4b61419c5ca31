// Package eventkind reads the table of event kinds (kinds.txt), the one
// place a kind is defined, and renders what derives from it: the Go
// constants, the feed's lists, the GraphQL enum, the dashboard's kinds and
// their documentation. `make generate` writes them (gen.go).
package eventkind

import (
	_ "embed"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

//go:embed kinds.txt
var table string

// Kind is one row of the table.
type Kind struct {
	// Name is what events carry as their kind, such as "session.opened".
	Name string
	// Package is the Go package whose writes record it (engine or store),
	// and Const the constant's name there.
	Package, Const string
	// Lifecycle kinds are what sessionsChanged carries when no kinds are named.
	Lifecycle bool
	// List kinds are what the dashboard's sessions list hears.
	List bool
	// System kinds belong to no session, so no feed may ask for them.
	System bool
	// Words is how the dashboard says it.
	Words string
	// Payload lists the payload's keys; a key ending in ? is optional.
	Payload []string
	// What says what happened, in a sentence.
	What string
}

// Enum is the kind's GraphQL enum value: SESSION_OPENED for session.opened.
func (k Kind) Enum() string {
	return strings.ToUpper(strings.ReplaceAll(k.Name, ".", "_"))
}

// Packages are the Go packages that may own a kind's constant.
var Packages = []string{"engine", "store"}

var (
	namePattern  = regexp.MustCompile(`^[a-z]+\.[a-z_]+$`)
	constPattern = regexp.MustCompile(`^Kind[A-Z][A-Za-z]+$`)
	keyPattern   = regexp.MustCompile(`^[a-z][A-Za-z]*\??$`)
)

// Table is the parsed kinds.txt; it is checked by the package's tests, so
// a malformed table fails them and `make generate`.
func Table() ([]Kind, error) { return Parse(table) }

// Parse reads a table in kinds.txt's format: comment lines start with #,
// each other line is a kind's six columns separated by "|".
func Parse(text string) ([]Kind, error) {
	var kinds []Kind
	names, consts := map[string]bool{}, map[string]bool{}
	for i, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, err := parseLine(line)
		if err != nil {
			return nil, fmt.Errorf("kinds.txt line %d: %w", i+1, err)
		}
		if names[k.Name] || consts[k.Const] {
			return nil, fmt.Errorf("kinds.txt line %d: %s (%s) is defined twice", i+1, k.Name, k.Const)
		}
		names[k.Name], consts[k.Const] = true, true
		kinds = append(kinds, k)
	}
	if len(kinds) == 0 {
		return nil, fmt.Errorf("kinds.txt defines no kind")
	}
	return kinds, nil
}

func parseLine(line string) (Kind, error) {
	cols := strings.Split(line, "|")
	if len(cols) != 6 {
		return Kind{}, fmt.Errorf("%d columns, want 6 (kind | constant | flags | words | payload | what)", len(cols))
	}
	for i := range cols {
		cols[i] = strings.TrimSpace(cols[i])
	}
	k := Kind{Name: cols[0], Words: cols[3], What: cols[5]}
	if !namePattern.MatchString(k.Name) {
		return k, fmt.Errorf("kind %q is not noun.verb in lower case", k.Name)
	}
	pkg, name, ok := strings.Cut(cols[1], ".")
	if !ok || !constPattern.MatchString(name) || !slices.Contains(Packages, pkg) {
		return k, fmt.Errorf("constant %q is not engine.KindX or store.KindX", cols[1])
	}
	k.Package, k.Const = pkg, name
	for _, f := range strings.Fields(cols[2]) {
		switch f {
		case "lifecycle":
			k.Lifecycle = true
		case "list":
			k.List = true
		case "system":
			k.System = true
		default:
			return k, fmt.Errorf("flag %q is none of lifecycle, list, system", f)
		}
	}
	if k.System && (k.Lifecycle || k.List) {
		return k, fmt.Errorf("%s belongs to no session, so no feed carries it", k.Name)
	}
	if k.Words == "" || k.What == "" {
		return k, fmt.Errorf("%s needs its words and what it says", k.Name)
	}
	for _, key := range strings.Split(cols[4], ",") {
		key = strings.TrimSpace(key)
		if !keyPattern.MatchString(key) {
			return k, fmt.Errorf("payload key %q of %s is not a JSON name (optional ones end in ?)", key, k.Name)
		}
		k.Payload = append(k.Payload, key)
	}
	return k, nil
}
