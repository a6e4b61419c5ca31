package graph

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The shapes InputChecks reads: query text, values of any Go type gqlparser
// coerced a variable to, and the paths it names fields by.

// bracketDepth returns how deep (, [ and { nest in a query's text, outside
// strings and comments, stopping once it passes limit.
func bracketDepth(query string, limit int) int {
	depth, deepest := 0, 0
	for i := 0; i < len(query) && deepest <= limit; i++ {
		switch c := query[i]; c {
		case '{', '[', '(':
			depth++
			deepest = max(deepest, depth)
		case '}', ']', ')':
			depth--
		case '#':
			for i < len(query) && query[i] != '\n' {
				i++
			}
		case '"':
			if strings.HasPrefix(query[i:], `"""`) {
				end := strings.Index(query[i+3:], `"""`)
				if end < 0 {
					return deepest
				}
				i += 3 + end + 2
				continue
			}
			for i++; i < len(query) && query[i] != '"' && query[i] != '\n'; i++ {
				if query[i] == '\\' {
					i++
				}
			}
		}
	}
	return deepest
}

// asList returns v's items when v is a list of any element type: gqlparser
// turns a single variable value given for a list into a one-item slice of
// the value's own type ([]string), not []any.
func asList(v any) ([]any, bool) {
	if list, ok := v.([]any); ok {
		return list, true
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return nil, false
	}
	out := make([]any, rv.Len())
	for i := range out {
		out[i] = rv.Index(i).Interface()
	}
	return out, true
}

// asObject returns v's fields when v is a map with string keys of any
// value type.
func asObject(v any) (map[string]any, bool) {
	if obj, ok := v.(map[string]any); ok {
		return obj, true
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Map || rv.Type().Key().Kind() != reflect.String {
		return nil, false
	}
	out := make(map[string]any, rv.Len())
	for it := rv.MapRange(); it.Next(); {
		out[it.Key().String()] = it.Value().Interface()
	}
	return out, true
}

// pathStep is one step of a checked value's path: an object's key, or a
// list's index (index -1 for a key). A typed step, not an any, so that a
// key is not boxed at every step of every record of a request.
type pathStep struct {
	key   string
	index int
}

func keyStep(k string) pathStep { return pathStep{key: k, index: -1} }
func indexStep(i int) pathStep  { return pathStep{index: i} }

// path renders the checked value's place: records[3].name, where.not.and[0],
// metadata["a key"].
func (w *inputWalk) path() string {
	var b strings.Builder
	for _, seg := range w.at {
		switch s := seg.key; {
		case seg.index >= 0:
			fmt.Fprintf(&b, "[%d]", seg.index)
		default:
			if isName(s) {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(s)
			} else {
				fmt.Fprintf(&b, "[%s]", strconv.QuoteToASCII(truncateKey(s)))
			}
		}
	}
	return b.String()
}

// isName reports whether s reads well after a dot: a GraphQL-style name.
func isName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i, r := range s {
		if !(r == '_' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || i > 0 && '0' <= r && r <= '9') {
			return false
		}
	}
	return true
}

// truncateKey keeps a huge map key from filling an error message.
func truncateKey(s string) string {
	if len(s) <= 64 {
		return s
	}
	cut := 64
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
