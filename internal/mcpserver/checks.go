package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"sessiongraph/internal/apperr"
	"sessiongraph/internal/engine"
)

// checkArguments refuses, before a tool runs, what GraphQL's input checks
// refuse before an operation runs: a string over engine.MaxTextBytes or
// with a NUL (PostgreSQL cannot store one), a list over
// engine.MaxListItems, nesting deeper than engine.MaxNesting, and more than
// engine.MaxInputBytes of text in all. Each refusal names the field. Text
// that is not UTF-8 was refused before the SDK decoded it (checkMessages):
// decoded, it is U+FFFD.
//
// Then it fits the arguments to the tool's input schema (fit), as
// GraphQL fits variables to their types: what it answers is the arguments
// the tool runs with, without the optional ones given as null.
func checkArguments(raw json.RawMessage, schema *jsonschema.Schema) (json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return raw, nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, apperr.New(apperr.BadUserInput, "the arguments are not JSON: %v", err)
	}
	w := argWalk{}
	w.value(v, "", 0)
	if w.err != nil {
		return nil, w.err
	}
	if schema == nil {
		return raw, nil // not a tool: the SDK answers that
	}
	f := fit{}
	f.value(v, schema, "")
	switch {
	case f.err != nil:
		return nil, f.err
	case !f.dropped:
		return raw, nil
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode the arguments again: %w", err)
	}
	return out, nil
}

type argWalk struct {
	total int
	err   error
}

func (w *argWalk) value(v any, path string, depth int) {
	if w.err != nil {
		return
	}
	if depth > engine.MaxNesting {
		w.err = apperr.TooLarge(path, "%s nests more than %d objects and lists deep", path, engine.MaxNesting)
		return
	}
	switch x := v.(type) {
	case string:
		w.text(x, path)
	case []any:
		if len(x) > engine.MaxListItems {
			w.err = apperr.TooLarge(path, "%s has %d items; at most %d are allowed: split the call", path, len(x), engine.MaxListItems)
			return
		}
		for i, item := range x {
			w.value(item, fmt.Sprintf("%s[%d]", path, i), depth+1)
		}
	case map[string]any:
		for k, item := range x {
			here := k
			if path != "" {
				here = path + "." + k
			}
			w.text(k, here)
			w.value(item, here, depth+1)
		}
	}
}

func (w *argWalk) text(s, path string) {
	if w.err != nil {
		return
	}
	w.total += len(s)
	switch {
	case len(s) > engine.MaxTextBytes:
		w.err = apperr.TooLarge(path, "%s is %d bytes; at most %d are allowed", path, len(s), engine.MaxTextBytes)
	case w.total > engine.MaxInputBytes:
		w.err = apperr.TooLarge(path, "the arguments of this call hold more than %d bytes of text: split it", engine.MaxInputBytes)
	case strings.IndexByte(s, 0) >= 0:
		w.err = apperr.Invalid(path, "%s contains a NUL character (\\u0000), which cannot be stored: remove it", path)
	}
}
