package graph_test

import (
	"math/rand/v2"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"

	"sessiongraph/internal/engine"
)

// hostileFixture holds the ids the walker's arguments point at: its own
// tenant's session, turn, refs and keys, and another tenant's session.
type hostileFixture struct {
	sessionID, otherSessionID string
	nodeIDs                   map[string]string // a node of each type, by type name
	keyID                     string            // a key that revokeAPIKey may revoke
	cursor                    string
}

// argGen makes argument values from the schema's types: plausible ones, so
// that a request reaches the server's deeper checks, and hostile ones.
type argGen struct {
	schema *ast.Schema
	fx     *hostileFixture
	rnd    *rand.Rand
	field  string // the field whose arguments are made
}

// helpfulFields are optional input fields a plausible request gives, so
// that it gets past "say what this is about" to the checks behind.
var helpfulFields = map[string]bool{"entityType": true, "table": true, "historySummary": true, "first": true}

// plausible returns a value the server should accept for an argument or
// input field called name of type t: required input fields are filled,
// optional ones left out.
func (g *argGen) plausible(name string, t *ast.Type, depth int) any {
	if t.Elem != nil {
		return []any{g.plausible(name, t.Elem, depth+1)}
	}
	def := g.schema.Types[t.NamedType]
	switch def.Kind {
	case ast.Enum:
		return def.EnumValues[0].Name
	case ast.InputObject:
		obj := map[string]any{}
		if depth > 3 {
			return obj
		}
		for _, f := range def.Fields {
			// Required fields, the ones that name what the request is
			// about, and at random some others.
			if f.Type.NonNull && f.DefaultValue == nil || helpfulFields[f.Name] || g.rnd.IntN(3) == 0 && !f.Type.NonNull {
				obj[f.Name] = g.plausible(f.Name, f.Type, depth+1)
			}
		}
		return obj
	}
	switch t.NamedType {
	case "Int":
		if name == "first" || name == "last" {
			return 5
		}
		return 1
	case "Float":
		return 1.5
	case "Boolean":
		return true
	case "Map":
		return map[string]any{"id": newUUID(), "name": "Dal", "instructions": "Simmer."}
	case "StringMap":
		return map[string]any{"channel": "web"}
	case "JSON":
		return "recipe_1"
	case "Time":
		return "2026-01-02T15:04:05Z"
	case "Cursor":
		return g.fx.cursor
	case "ID", "UUID":
		return g.plausibleID(name)
	}
	return g.plausibleString(name)
}

func (g *argGen) plausibleID(name string) any {
	switch {
	case name == "entityID" || name == "entityIDs":
		return newUUID()
	case name == "id" && g.field == "revokeAPIKey":
		return g.fx.keyID
	}
	return g.fx.sessionID
}

func (g *argGen) plausibleString(name string) string {
	switch name {
	case "tenant":
		return "acme"
	case "domain":
		return "kitchen"
	case "entityType", "targetType":
		return "recipe"
	case "table":
		return "recipes"
	case "ref", "refs", "genRef":
		if g.field == "updateArtifact" || name == "genRef" {
			return "gen_recipe_1"
		}
		return "recipe_1"
	case "tokenizer":
		return "chars4"
	case "field":
		return "id"
	case "op":
		return "eq"
	}
	return "hostile " + name
}

// hostile returns a value the server must refuse, or take, without ever
// failing inside: it fits the type of the position, or pointedly not.
func (g *argGen) hostile(t *ast.Type) any {
	common := []any{nil, map[string]any{}, []any{}, "\x00", true}
	var special []any
	def := g.schema.Types[t.NamedType]
	switch {
	case t.Elem != nil:
		many := make([]any, engine.MaxListItems+1)
		for i := range many {
			many[i] = g.plausible("", t.Elem, 1)
		}
		special = []any{[]any{nil}, many, g.plausible("", t.Elem, 1)}
	case def.Kind == ast.InputObject:
		special = []any{map[string]any{"unknown": 1}, deepObject(def.Fields, engine.MaxNesting+8), "an object"}
	case def.Kind == ast.Enum:
		special = []any{"NOPE", strings.ToLower(def.EnumValues[0].Name)}
	case t.NamedType == "Int":
		special = []any{0, -1, 2147483647, 2147483648, -2147483649, int64(1) << 62, "12", 1.5}
	case t.NamedType == "Map", t.NamedType == "JSON", t.NamedType == "StringMap":
		special = []any{nestedMap(engine.MaxNesting + 8), map[string]any{"k\x00": "v"}, map[string]any{"id": newUUID(), "name": "a\x00b"},
			map[string]any{"n": 1}, []any{1, 2}, map[string]any{"list": make([]any, engine.MaxListItems+1)}, "plain"}
	default: // strings, ids, cursors, times
		special = []any{"", "a\x00b", strings.Repeat("é", engine.MaxTextBytes/2+1), "\xff\xfe", g.fx.otherSessionID, newUUID(),
			"recipe_999", "gen_recipe_1", "' OR 1=1 --", strings.Repeat("🎉", 2000), g.fx.cursor + "A", "aGVsbG8gd29ybGQ", 1 << 40}
	}
	all := append(common, special...)
	return all[g.rnd.IntN(len(all))]
}

// deepObject nests an input object in itself through its first field that
// takes the same type, when it has one (a WhereInput's not).
func deepObject(fields ast.FieldList, depth int) any {
	for _, f := range fields {
		if f.Name == "not" {
			v := map[string]any{}
			for range depth {
				v = map[string]any{"not": v}
			}
			return v
		}
	}
	return map[string]any{}
}

func nestedMap(depth int) map[string]any {
	v := map[string]any{"leaf": "x"}
	for range depth {
		v = map[string]any{"more": v}
	}
	return v
}

// positions lists every place in a field's arguments a hostile value can
// go: each argument, each field of an input object and each list's first
// item, to depth levels of input objects.
func (g *argGen) positions(args ast.ArgumentDefinitionList) []position {
	var out []position
	var walk func(path []any, t *ast.Type, depth int)
	walk = func(path []any, t *ast.Type, depth int) {
		out = append(out, position{path: path, typ: t})
		if t.Elem != nil {
			walk(append(append([]any{}, path...), 0), t.Elem, depth)
			return
		}
		if def := g.schema.Types[t.NamedType]; def.Kind == ast.InputObject && depth < 2 {
			for _, f := range def.Fields {
				walk(append(append([]any{}, path...), f.Name), f.Type, depth+1)
			}
		}
	}
	for _, a := range args {
		walk([]any{a.Name}, a.Type, 0)
	}
	return out
}

// position is a place in a field's arguments: argument name, then input
// field names and list indexes.
type position struct {
	path []any
	typ  *ast.Type
}

// set puts v at the position in args, making the objects and lists on the
// way when the plausible arguments left them out.
func (p position) set(args map[string]any, v any) {
	var cur any = args
	for i, seg := range p.path {
		last := i == len(p.path)-1
		switch c := cur.(type) {
		case map[string]any:
			key := seg.(string)
			if last {
				c[key] = v
				return
			}
			next, ok := c[key].(map[string]any)
			if _, isIndex := p.path[i+1].(int); isIndex {
				list, ok := c[key].([]any)
				if !ok || len(list) == 0 {
					list = []any{map[string]any{}}
					c[key] = list
				}
				cur = list
				continue
			}
			if !ok {
				next = map[string]any{}
				c[key] = next
			}
			cur = next
		case []any:
			if last {
				c[0] = v
				return
			}
			if _, ok := c[0].(map[string]any); !ok {
				c[0] = map[string]any{}
			}
			cur = c[0]
		default:
			return
		}
	}
}
