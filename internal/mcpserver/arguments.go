package mcpserver

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"sessiongraph/internal/apperr"
)

// fit holds a tool's arguments to its input schema before the SDK decodes
// them, so that a model learns which argument is at fault in words it can
// act on (the SDK's own validation speaks of reflect values). Null is
// absence: an optional argument or field given as null is dropped, and a
// required one given as null is refused as a missing one is. The schemas
// are the ones schemaOf infers from the tools' Go types: objects with
// properties, required fields and no others, maps, lists, strings,
// integers, numbers, booleans, enums, and {} for any value.
type fit struct {
	err     error
	dropped bool // an optional null was dropped: the arguments changed
}

func (f *fit) value(v any, s *jsonschema.Schema, path string) {
	if f.err != nil || s == nil {
		return
	}
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	if len(types) == 0 {
		return // any JSON value
	}
	if got := jsonType(v); !slices.Contains(types, got) && !(got == "integer" && slices.Contains(types, "number")) {
		f.refuse(path, "%s must be %s, not %s", name(path), article(types[0]), article(got))
		return
	}
	if len(s.Enum) > 0 && !slices.Contains(s.Enum, v) {
		values := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			values[i] = fmt.Sprint(e)
		}
		f.refuse(path, "%s %q is not one of %s", name(path), fmt.Sprint(v), strings.Join(values, ", "))
		return
	}
	switch x := v.(type) {
	case map[string]any:
		f.object(x, s, path)
	case []any:
		for i, item := range x {
			f.value(item, s.Items, fmt.Sprintf("%s[%d]", path, i))
		}
	}
}

func (f *fit) object(x map[string]any, s *jsonschema.Schema, path string) {
	for _, key := range slices.Sorted(maps.Keys(x)) {
		here := join(path, key)
		p, known := s.Properties[key]
		switch {
		case !known && isFalse(s.AdditionalProperties):
			f.refuse(here, "%q is not %s; %s", here, within(path), takes(s, path))
			return
		case !known:
			f.value(x[key], s.AdditionalProperties, here)
		case x[key] == nil && !slices.Contains(s.Required, key):
			delete(x, key) // null is absence
			f.dropped = true
		case x[key] == nil:
			f.refuse(here, "%s is required and may not be null: give %s", name(here), article(typeOf(p)))
			return
		default:
			f.value(x[key], p, here)
		}
		if f.err != nil {
			return
		}
	}
	for _, key := range s.Required {
		if _, ok := x[key]; !ok {
			here := join(path, key)
			f.refuse(here, "%s is required: give %s", name(here), article(typeOf(s.Properties[key])))
			return
		}
	}
}

func (f *fit) refuse(field, format string, args ...any) {
	f.err = apperr.Invalid(field, format, args...)
}

// jsonType is the JSON Schema type of a value decoded with UseNumber.
func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// typeOf is the type a schema wants, for a message.
func typeOf(s *jsonschema.Schema) string {
	switch {
	case s == nil:
		return "value"
	case s.Type != "":
		return s.Type
	case len(s.Types) > 0:
		return s.Types[0]
	}
	return "value"
}

func article(t string) string {
	switch t {
	case "null":
		return "null"
	case "integer", "array", "object":
		return "an " + t
	}
	return "a " + t
}

// isFalse reports the schema false ({"not": {}}): no other fields.
func isFalse(s *jsonschema.Schema) bool {
	return s != nil && s.Not != nil && reflect.ValueOf(*s.Not).IsZero()
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// name is how a message names the argument or field at path.
func name(path string) string {
	if path == "" {
		return "the arguments"
	}
	return path
}

func within(path string) string {
	if path == "" {
		return "an argument of this tool"
	}
	return "a field of " + path
}

// takes lists the fields an object has.
func takes(s *jsonschema.Schema, path string) string {
	what := path + " has "
	if path == "" {
		what = "it takes "
	}
	return what + strings.Join(slices.Sorted(maps.Keys(s.Properties)), ", ")
}
