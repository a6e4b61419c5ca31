package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"sessiongraph/graph/scalar"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/engine"
)

// InputChecks refuses, before anything executes, every argument value the
// server cannot take, wherever it sits (a mutation's input, a filter, a
// nested field's options, a record inside a Map): a string with a NUL
// (PostgreSQL cannot store one) or that is not UTF-8, an Int outside
// GraphQL's 32 bits (gqlgen would take 64), a null where the schema wants a
// value, a cursor this server did not hand out, and anything over the size
// limits of engine/limits.go. So no oversize or unstorable input reaches a
// transaction, and every refusal names the field by its path in
// extensions.field, relative to a mutation's input. The walk runs twice when
// variables hold objects or lists: over them as sent, before gqlparser
// coerces them (inputs_raw.go), and over the operation as coerced.
type InputChecks struct {
	// TokenLimit bounds the tokens read from a query parsed to check its
	// variables, as gqlgen's own parse is bounded (0: no bound).
	TokenLimit int
	// Documents is gqlgen's query cache, whose documents the check of raw
	// variables walks instead of parsing their query again (nil: none).
	Documents graphql.Cache[*ast.QueryDocument]
	schema    *ast.Schema
	passed    passedOperations
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
	graphql.OperationContextMutator
} = &InputChecks{}

// maxQueryNesting bounds how deep brackets nest in a query's text, checked
// before it is parsed: a valid query nests its selections at most
// MAX_DEPTH deep and an argument engine.MaxNesting deep, far below this,
// while a 2,400-deep {not: {not: ...}} literal took gqlparser half a
// second or more to parse and validate.
const maxQueryNesting = 128

// maxInputObjects bounds the input objects in the arguments of one
// operation (a Map's contents are not input objects): room for a filter of
// engine.MaxPredicates predicates each in a group of its own (about 1,000
// objects) beside lists of steps and retained refs at their limit. The
// other limits leave their number free (an or of 1,000 ors of 1,000 {}),
// and gqlparser's coercion of a variable costs up to 80 µs an object.
const maxInputObjects = 4000

// ExtensionName implements graphql.HandlerExtension.
func (*InputChecks) ExtensionName() string { return "InputChecks" }

// Validate implements graphql.HandlerExtension; it keeps the schema, whose
// types guide the walk.
func (c *InputChecks) Validate(es graphql.ExecutableSchema) error {
	c.schema = es.Schema()
	return nil
}

// MutateOperationParameters refuses a query whose brackets nest deeper
// than maxQueryNesting before it is parsed, and variables the walk refuses
// before they are coerced.
func (c *InputChecks) MutateOperationParameters(ctx context.Context, params *graphql.RawParams) *gqlerror.Error {
	if depth := bracketDepth(params.Query, maxQueryNesting); depth > maxQueryNesting {
		e := gqlerror.Errorf("the query nests brackets more than %d deep", maxQueryNesting)
		e.Extensions = map[string]any{"code": string(apperr.QueryTooDeep)}
		return e
	}
	return c.checkRawVariables(ctx, params)
}

// MutateOperationContext checks every argument of every field of the
// operation, with the request's variables. An operation that declares no
// variable holds only literals, so its walk's answer is its document's:
// one that passed once passes again without a walk (gqlgen hands every
// request of the same query text the same parsed document).
func (c *InputChecks) MutateOperationContext(_ context.Context, rc *graphql.OperationContext) *gqlerror.Error {
	literal := len(rc.Operation.VariableDefinitions) == 0
	if literal && c.passed.has(rc.Operation) {
		return nil
	}
	w := inputWalk{schema: c.schema, frags: rc.Doc.Fragments, vars: rc.Variables}
	w.selection(rc.Operation.SelectionSet)
	if literal && w.err == nil {
		c.passed.add(rc.Operation)
	}
	return w.err
}

// maxPassedOperations bounds the operations remembered as passed: past it,
// they are forgotten all at once (gqlgen's query cache keeps 1,000
// documents).
const maxPassedOperations = 1000

// passedOperations are operations without variables whose walk passed.
type passedOperations struct {
	sync.RWMutex
	ops map[*ast.OperationDefinition]struct{}
}

func (p *passedOperations) has(op *ast.OperationDefinition) bool {
	p.RLock()
	defer p.RUnlock()
	_, ok := p.ops[op]
	return ok
}

func (p *passedOperations) add(op *ast.OperationDefinition) {
	p.Lock()
	defer p.Unlock()
	if p.ops == nil || len(p.ops) >= maxPassedOperations {
		p.ops = map[*ast.OperationDefinition]struct{}{}
	}
	p.ops[op] = struct{}{}
}

// inputWalk visits the arguments of an operation's fields, each fragment
// once, and keeps the first problem it finds.
type inputWalk struct {
	schema *ast.Schema
	frags  ast.FragmentDefinitionList
	vars   map[string]any
	seen   map[string]bool // fragments walked, made at the first spread
	// at is the path of the value being checked; keys are the response
	// keys of the field whose argument it is and its parents, made into a
	// response path only for a refusal.
	at    []pathStep
	keys  []string
	total int
	// objects counts the input objects walked, against maxInputObjects.
	objects int
	// argsOf is the field whose arguments are walked: a cursor among them
	// must fit its connection.
	argsOf *ast.Field
	// predicates counts the predicates of the filter being walked, over
	// all its branches; filterDepth is how deep the walk is in filters.
	predicates  int
	filterDepth int
	err         *gqlerror.Error
}

func (w *inputWalk) selection(set ast.SelectionSet) {
	for _, sel := range set {
		if w.err != nil {
			return
		}
		switch s := sel.(type) {
		case *ast.Field:
			key := s.Alias
			if key == "" {
				key = s.Name
			}
			w.keys = append(w.keys, key)
			w.field(s)
			w.selection(s.SelectionSet)
			w.keys = w.keys[:len(w.keys)-1]
		case *ast.InlineFragment:
			w.selection(s.SelectionSet)
		case *ast.FragmentSpread:
			if w.seen[s.Name] {
				continue
			}
			if w.seen == nil {
				w.seen = map[string]bool{}
			}
			w.seen[s.Name] = true
			if def := w.frags.ForName(s.Name); def != nil {
				w.selection(def.SelectionSet)
			}
		}
	}
}

// field checks the arguments a field is given (defaults come from the
// schema and are not checked).
func (w *inputWalk) field(f *ast.Field) {
	if f.Definition == nil {
		return
	}
	w.argsOf = f
	for _, arg := range f.Arguments {
		def := f.Definition.Arguments.ForName(arg.Name)
		if def == nil {
			continue
		}
		v, given := w.argument(arg)
		if !given {
			continue
		}
		// A mutation's fields are named relative to its one input.
		w.at = w.at[:0]
		if arg.Name != "input" {
			w.at = append(w.at, keyStep(arg.Name))
		}
		w.value(def.Type, v, 0)
		if w.err != nil {
			return
		}
	}
}

// argument returns an argument's value with the variables in it, and false
// when it is a variable the request left out (the default applies).
func (w *inputWalk) argument(arg *ast.Argument) (any, bool) {
	if arg.Value.Kind == ast.Variable {
		v, ok := w.vars[arg.Value.Raw]
		return v, ok
	}
	v, err := arg.Value.Value(w.vars)
	return v, err == nil
}

// value checks v against the type t at nesting depth.
func (w *inputWalk) value(t *ast.Type, v any, depth int) {
	if v == nil {
		if t.NonNull {
			w.fail(apperr.BadUserInput, "%s must not be null: give a value, or leave it out for its default", w.path())
		}
		return
	}
	if t.Elem != nil {
		list, ok := asList(v)
		if !ok { // a single value stands for a list of one
			w.value(t.Elem, v, depth)
			return
		}
		if !w.nest(depth+1) || !w.count(len(list)) {
			return
		}
		for i, item := range list {
			w.at = append(w.at, indexStep(i))
			w.value(t.Elem, item, depth+1)
			w.at = w.at[:len(w.at)-1]
			if w.err != nil {
				return
			}
		}
		return
	}
	def := w.schema.Types[t.NamedType]
	if def == nil {
		return
	}
	switch def.Kind {
	case ast.InputObject:
		obj, ok := asObject(v)
		if !ok || !w.nest(depth+1) {
			return
		}
		if w.objects++; w.objects > maxInputObjects {
			w.fail(apperr.InputTooLarge, "the arguments of this operation hold more than %d input objects (a variable used twice counts twice): split it", maxInputObjects)
			return
		}
		filter := isFilter(def)
		if filter {
			if w.filterDepth == 0 {
				w.predicates = 0 // each where argument has its own bound
			}
			w.filterDepth++
			defer func() { w.filterDepth-- }()
		}
		for _, f := range def.Fields { // schema order, so the first problem is the same each time
			fv, present := obj[f.Name]
			if !present {
				continue
			}
			w.at = append(w.at, keyStep(f.Name))
			if filter && !w.predicate(f.Name, fv) {
				return
			}
			w.value(f.Type, fv, depth+1)
			w.at = w.at[:len(w.at)-1]
			if w.err != nil {
				return
			}
		}
	case ast.Enum:
		// gqlparser lets a nested enum variable through in another case
		// ("admin"), which gqlgen then fails to read, unmapped.
		if name, ok := v.(string); ok && w.text(name) && def.EnumValues.ForName(name) == nil {
			values := make([]string, len(def.EnumValues))
			for i, e := range def.EnumValues {
				values[i] = e.Name
			}
			w.fail(apperr.BadUserInput, "%s is %.40q; it must be one of %s", w.path(), name, strings.Join(values, ", "))
		}
	case ast.Scalar:
		w.scalar(def.Name, v, depth)
	}
}

// scalar checks a scalar's value; Map, StringMap and JSON are walked whole.
func (w *inputWalk) scalar(name string, v any, depth int) {
	switch name {
	case "Int":
		w.int32(v)
	case "Map", "StringMap", "JSON":
		w.json(v, depth)
	case "Cursor":
		if w.text(v) {
			cursor, err := scalar.CheckCursor(v)
			if err == nil {
				err = cursorFits(w.argsOf, cursor, w.vars)
			}
			if err != nil {
				w.fail(apperr.InvalidCursor, "%s: %v", w.path(), err)
			}
		}
	default: // String, ID, UUID, Time, Boolean, Float: a string is checked as text
		w.text(v)
	}
}

// json walks a JSON value: its strings and keys are text, its arrays lists.
func (w *inputWalk) json(v any, depth int) {
	if list, ok := asList(v); ok {
		if !w.nest(depth+1) || !w.count(len(list)) {
			return
		}
		for i, item := range list {
			w.at = append(w.at, indexStep(i))
			w.json(item, depth+1)
			w.at = w.at[:len(w.at)-1]
			if w.err != nil {
				return
			}
		}
		return
	}
	obj, ok := asObject(v)
	if !ok {
		w.text(v)
		return
	}
	if !w.nest(depth + 1) {
		return
	}
	// The keys in order, in one array of their number (slices.Sorted grows
	// one from nothing: several allocations for every object of a request).
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		w.at = append(w.at, keyStep(k))
		if w.text(k) {
			w.json(obj[k], depth+1)
		}
		w.at = w.at[:len(w.at)-1]
		if w.err != nil {
			return
		}
	}
}

// text checks one string (a value or a key) and adds it to the total; it
// reports whether the walk may go on.
func (w *inputWalk) text(v any) bool {
	s, ok := v.(string)
	if !ok || w.err != nil {
		return w.err == nil
	}
	w.total += len(s)
	switch {
	case len(s) > engine.MaxTextBytes:
		w.fail(apperr.InputTooLarge, "%s is %d bytes; at most %d are allowed", w.path(), len(s), engine.MaxTextBytes)
	case w.total > engine.MaxInputBytes:
		w.fail(apperr.InputTooLarge, "the arguments of this operation hold more than %d bytes of text (a variable used twice counts twice): split it", engine.MaxInputBytes)
	case strings.IndexByte(s, 0) >= 0:
		w.fail(apperr.BadUserInput, "%s contains a NUL character (\\u0000), which cannot be stored: remove it", w.path())
	case !utf8.ValidString(s):
		w.fail(apperr.BadUserInput, "%s is not valid UTF-8", w.path())
	}
	return w.err == nil
}

// int32 refuses an Int outside GraphQL's 32 bits (the spec's range; gqlgen
// reads 64-bit values into Go ints, and 2^62 seconds overflowed a TTL).
func (w *inputWalk) int32(v any) {
	var n int64
	var err error
	switch val := v.(type) {
	case int64:
		n = val
	case int:
		n = int64(val)
	case json.Number:
		n, err = strconv.ParseInt(string(val), 10, 64)
	case float64:
		n = int64(val)
		if float64(n) != val {
			err = fmt.Errorf("not whole")
		}
	default:
		return // not a number: gqlgen's own unmarshalling says so
	}
	if err != nil || n < math.MinInt32 || n > math.MaxInt32 {
		w.fail(apperr.BadUserInput, "%s is %v, which is not an Int: GraphQL's Int is 32-bit, from %d to %d", w.path(), v, math.MinInt32, math.MaxInt32)
	}
}

// isFilter reports whether def is one of ent's filter inputs
// (SessionWhereInput, RefWhereInput, ...).
func isFilter(def *ast.Definition) bool { return strings.HasSuffix(def.Name, "WhereInput") }

// patternSuffixes end the names of a filter's search fields, whose value is
// a pattern PostgreSQL matches with LIKE or ILIKE.
var patternSuffixes = []string{"Contains", "ContainsFold", "HasPrefix", "HasSuffix"}

// predicate counts a filter's field named name as one predicate (and, or
// and not only group others) and checks a search pattern's length; it
// reports whether the walk may go on. A filter's cost is linear in its
// predicates, so bounding their number bounds the work however the
// branches nest.
func (w *inputWalk) predicate(name string, v any) bool {
	switch name {
	case "and", "or", "not":
		return true
	}
	w.predicates++
	if w.predicates > engine.MaxPredicates {
		w.fail(apperr.InputTooLarge, "this filter has more than %d predicates (counted over all its and, or and not branches): simplify it", engine.MaxPredicates)
		return false
	}
	if s, ok := v.(string); ok && len(s) > engine.MaxPatternBytes && slices.ContainsFunc(patternSuffixes, func(suf string) bool { return strings.HasSuffix(name, suf) }) {
		// apperr cuts the quoted pattern to its start.
		msg := apperr.New(apperr.InputTooLarge, "%s is a search pattern of %d bytes; at most %d are allowed: %q", w.path(), len(s), engine.MaxPatternBytes, s).Message
		w.fail(apperr.InputTooLarge, "%s", msg)
		return false
	}
	return true
}

// nest reports whether a value may nest one level deeper, failing if not.
func (w *inputWalk) nest(depth int) bool {
	if depth > engine.MaxNesting {
		w.fail(apperr.InputTooLarge, "%s nests more than %d objects and lists deep", w.path(), engine.MaxNesting)
	}
	return w.err == nil
}

// count reports whether a list may have n items, failing if not.
func (w *inputWalk) count(n int) bool {
	if n > engine.MaxListItems {
		w.fail(apperr.InputTooLarge, "%s has %d items; at most %d are allowed: split the call", w.path(), n, engine.MaxListItems)
	}
	return w.err == nil
}

func (w *inputWalk) fail(code apperr.Code, format string, args ...any) {
	if w.err != nil {
		return
	}
	e := gqlerror.Errorf(format, args...)
	for _, k := range w.keys {
		e.Path = append(e.Path, ast.PathName(k))
	}
	e.Extensions = map[string]any{"code": string(code)}
	if p := w.path(); p != "" {
		e.Extensions["field"] = p
	}
	w.err = e
}
