package scalar

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"entgo.io/contrib/entgql"
	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vmihailenco/msgpack/v5"

	"sessiongraph/internal/apperr"
)

// Cursor is a Relay cursor over UUID-keyed rows: the row's id and its
// values in the order the page was read (entgql's).
type Cursor = entgql.Cursor[uuid.UUID]

// CursorScope is where a cursor was handed out, and so the only place it
// is valid: the same connection field, of the same parent object, with the
// same orderBy. A cursor is a position in one list; in another list (the
// turns of another session, the sessions in another order) it names a
// position that list does not have.
type CursorScope struct {
	// Field is the connection field, as Type.field: "Session.turns".
	Field string
	// Parent is the id of the object the field hangs off; empty for a
	// field of Query.
	Parent string
	// Order is the field's orderBy, one "FIELD DIRECTION" per term.
	Order string
}

// scopeTagLen is the length of a scope's tag in a cursor: 4 bytes for each
// of the field, the parent and the order, so that a refusal can say which
// of them differs.
const scopeTagLen = 12

func (s CursorScope) tag() []byte {
	tag := make([]byte, 0, scopeTagLen)
	for _, part := range []string{s.Field, s.Parent, s.Order} {
		h := fnv.New32a()
		_, _ = io.WriteString(h, part)
		tag = binary.BigEndian.AppendUint32(tag, h.Sum32())
	}
	return tag
}

// wireCursor is a cursor as a client holds it: msgpack of entgql's fields
// and the scope's tag, in base64 without padding.
type wireCursor struct {
	ID    uuid.UUID `msgpack:"i"`
	Value any       `msgpack:"v"` // always written: entgql omitted a zero value, so 0 or "" paged as no value
	Scope []byte    `msgpack:"s"`
}

// EncodeCursor is the text of c handed out in scope.
func EncodeCursor(c Cursor, scope CursorScope) string {
	v, ok := orderValue(c.Value, true)
	if !ok {
		panic(fmt.Sprintf("a cursor's order value is a column's value, not a %T", c.Value))
	}
	b, err := msgpack.Marshal(wireCursor{ID: c.ID, Value: v, Scope: scope.tag()})
	if err != nil {
		panic(err) // a column's value always encodes
	}
	return base64.RawStdEncoding.EncodeToString(b)
}

var errNotCursor = errors.New("not a cursor")

// decodeCursor reads a cursor's text strictly: base64 in the standard
// alphabet without padding and with zero trailing bits, of exactly the
// msgpack EncodeCursor writes for the value it decodes to. Any other
// spelling of the same cursor (padded, URL alphabet, bytes appended or cut)
// is not one.
func decodeCursor(s string) (wireCursor, error) {
	var c wireCursor
	raw, err := base64.RawStdEncoding.Strict().DecodeString(s)
	if err != nil {
		return c, errNotCursor
	}
	d := msgpack.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields(true)
	if err := d.Decode(&c); err != nil || c.ID == uuid.Nil || len(c.Scope) != scopeTagLen {
		return c, errNotCursor
	}
	var ok bool
	if c.Value, ok = orderValue(c.Value, true); !ok {
		return c, errNotCursor
	}
	again, err := msgpack.Marshal(c)
	if err != nil || !bytes.Equal(again, raw) {
		return c, errNotCursor
	}
	return c, nil
}

// orderValue is v in the one form a cursor holds it: a column's value, or
// a list of them for an order by several fields, with every integer an int
// (which msgpack writes in its shortest form) and every float a float64.
// The decoder reads a number back in the width it was written, so a value
// spelled any longer way comes back in another form and is refused. ok is
// false for a value no order holds.
func orderValue(v any, list bool) (_ any, ok bool) {
	switch n := v.(type) {
	case nil, bool, string, time.Time, float64, int:
		return v, true
	case float32:
		return float64(n), true
	case int8:
		return int(n), true
	case int16:
		return int(n), true
	case int32:
		return int(n), true
	case int64:
		return int(n), true
	case uint8:
		return int(n), true
	case uint16:
		return int(n), true
	case uint32:
		return int(n), true
	case uint:
		return int(n), n <= math.MaxInt64
	case uint64:
		return int(n), n <= math.MaxInt64
	case []any:
		if !list {
			return nil, false
		}
		out := make([]any, len(n))
		for i, e := range n {
			if out[i], ok = orderValue(e, false); !ok {
				return nil, false
			}
		}
		return out, true
	}
	// A nullable column's pointer, or a named type (an enum): its value.
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer:
		if rv.IsNil() {
			return nil, true
		}
		return orderValue(rv.Elem().Interface(), list)
	case reflect.String:
		return rv.String(), true
	case reflect.Bool:
		return rv.Bool(), true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return int(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return int(rv.Uint()), rv.Uint() <= math.MaxInt64
	case reflect.Float32, reflect.Float64:
		return rv.Float(), true
	}
	return nil, false
}

// MarshalCursor writes a cursor with the scope of the connection it is
// handed out by (the connection field above the edge or pageInfo).
func MarshalCursor(c Cursor) graphql.ContextMarshaler {
	return graphql.ContextWriterFunc(func(ctx context.Context, w io.Writer) error {
		scope, _ := ScopeOf(connectionAbove(graphql.GetFieldContext(ctx)), graphql.GetOperationContext(ctx))
		writeQuoted(w, EncodeCursor(c, scope))
		return nil
	})
}

// CursorWriter returns what writes the cursors of the connection whose
// field ctx resolves, byte for byte as MarshalCursor writes them: for code
// that writes a connection's JSON itself. It writes null for nil.
func CursorWriter(ctx context.Context) func(io.Writer, *Cursor) {
	scope, _ := ScopeOf(graphql.GetFieldContext(ctx), graphql.GetOperationContext(ctx))
	return func(w io.Writer, c *Cursor) {
		if c == nil {
			_, _ = io.WriteString(w, "null")
			return
		}
		writeQuoted(w, EncodeCursor(*c, scope))
	}
}

func writeQuoted(w io.Writer, s string) {
	_, _ = io.WriteString(w, `"`+s+`"`) // base64 needs no escape
}

// UnmarshalCursor reads a cursor this server handed out, where it was
// handed out: when ctx resolves a connection field (as it does when
// gqlgen reads that field's arguments), a cursor of any other field,
// parent or orderBy is refused with INVALID_CURSOR. Elsewhere (InputChecks'
// walk over the operation, before anything runs) only its spelling is
// checked.
func UnmarshalCursor(ctx context.Context, v any) (Cursor, error) {
	wc, err := decodeCursorArg(v)
	if err != nil {
		return Cursor{}, err
	}
	fc := graphql.GetFieldContext(ctx)
	if fc != nil && isConnection(fc) && graphql.HasOperationContext(ctx) {
		scope, _ := ScopeOf(fc, graphql.GetOperationContext(ctx))
		if err := scope.admits(wc.Scope, fc.Object, true); err != nil {
			return Cursor{}, err
		}
	}
	return Cursor{ID: wc.ID, Value: wc.Value}, nil
}

// UnmarshalCursorFor reads a cursor given to the connection field f with
// the arguments args (as the request spelled them), for code that reads a
// nested connection ahead of its resolver (ent's eager loading): a cursor
// of another field or orderBy is refused. Which parent f hangs off is not
// known there; the field's resolver checks that too.
func UnmarshalCursorFor(f *ast.Field, args map[string]any, v any) (*Cursor, error) {
	wc, err := decodeCursorArg(v)
	if err != nil {
		return nil, err
	}
	if f != nil && f.ObjectDefinition != nil {
		scope := CursorScope{Field: f.ObjectDefinition.Name + "." + f.Name, Order: orderText(args["orderBy"])}
		if err := scope.admits(wc.Scope, f.ObjectDefinition.Name, false); err != nil {
			return nil, err
		}
	}
	return &Cursor{ID: wc.ID, Value: wc.Value}, nil
}

func decodeCursorArg(v any) (wireCursor, error) {
	s, _ := v.(string)
	wc, err := decodeCursor(s)
	if err != nil {
		return wc, apperr.New(apperr.InvalidCursor,
			"%s is not a cursor from this API: pass endCursor or startCursor back unchanged", quoteHead(s))
	}
	return wc, nil
}

// CheckCursor reports whether v is spelled as a cursor of this API, without
// regard to where it was handed out, and returns what it holds.
func CheckCursor(v any) (SpelledCursor, error) {
	s, _ := v.(string)
	wc, err := decodeCursor(s)
	if err != nil {
		return SpelledCursor{}, errors.New(quoteHead(s) + " is not a cursor from this API: pass endCursor or startCursor back unchanged")
	}
	return SpelledCursor{Value: wc.Value, tag: wc.Scope}, nil
}

// SpelledCursor is a cursor read from its text, before anything checks
// where it is passed.
type SpelledCursor struct {
	// Value is its order value: nil, a column's value, or a list of them
	// (orderValue's forms).
	Value any
	tag   []byte
}

// From reports whether c was handed out by the connection field (as
// Type.field) with orderBy (as the request spells it), of whatever parent.
func (c SpelledCursor) From(field string, orderBy any) bool {
	want := CursorScope{Field: field, Order: orderText(orderBy)}.tag()
	return bytes.Equal(c.tag[0:4], want[0:4]) && bytes.Equal(c.tag[8:12], want[8:12])
}

// admits refuses a cursor whose tag names another scope, saying which part
// differs.
func (s CursorScope) admits(tag []byte, object string, parent bool) error {
	want := s.tag()
	const advice = ": pass back endCursor or startCursor from the same field, of the same object, with the same orderBy"
	switch {
	case !bytes.Equal(tag[0:4], want[0:4]):
		return apperr.New(apperr.InvalidCursor, "this cursor was handed out by another connection, not %s%s", s.Field, advice)
	case parent && !bytes.Equal(tag[4:8], want[4:8]):
		return apperr.New(apperr.InvalidCursor, "this cursor was handed out by %s of another %s%s", s.Field, object, advice)
	case !bytes.Equal(tag[8:12], want[8:12]):
		return apperr.New(apperr.InvalidCursor, "this cursor was handed out by %s with another orderBy%s", s.Field, advice)
	}
	return nil
}

// ScopeOf is the scope of the connection field fc resolves; false when fc
// is not a connection field.
func ScopeOf(fc *graphql.FieldContext, oc *graphql.OperationContext) (CursorScope, bool) {
	if fc == nil || !isConnection(fc) {
		return CursorScope{}, false
	}
	s := CursorScope{Field: fc.Object + "." + fc.Field.Name}
	for p := fc.Parent; p != nil; p = p.Parent {
		if p.Result != nil {
			s.Parent = idOf(p.Result)
			break
		}
	}
	if oc != nil {
		s.Order = orderText(fc.Field.ArgumentMap(oc.Variables)["orderBy"])
	}
	return s, true
}

// connectionAbove is the connection field a cursor field (an edge's cursor,
// pageInfo's startCursor or endCursor) belongs to.
func connectionAbove(fc *graphql.FieldContext) *graphql.FieldContext {
	for ; fc != nil; fc = fc.Parent {
		if isConnection(fc) {
			return fc
		}
	}
	return nil
}

// isConnection reports whether fc resolves a Relay connection field.
func isConnection(fc *graphql.FieldContext) bool {
	if fc.Field.Field == nil {
		return false
	}
	d := fc.Field.Definition
	return d != nil && d.Arguments.ForName("first") != nil && d.Arguments.ForName("last") != nil &&
		strings.HasSuffix(d.Type.Name(), "Connection")
}

// idOf is the id of the object a field's result holds (a pointer to an
// ent entity, or to an interface holding one); empty when it has none.
func idOf(v any) string {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return ""
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return ""
	}
	f := rv.FieldByName("ID")
	if !f.IsValid() || !f.CanInterface() {
		return ""
	}
	if id, ok := f.Interface().(uuid.UUID); ok {
		return id.String()
	}
	return ""
}

// orderText spells an orderBy argument (one order or a list, with the
// direction ASC when left out) as "FIELD DIRECTION" terms.
func orderText(v any) string {
	var list []any
	switch v := v.(type) {
	case nil:
		return ""
	case []any:
		list = v
	case map[string]any:
		list = []any{v}
	default: // a typed value: read it as JSON reads it
		b, err := json.Marshal(v)
		if err != nil {
			return ""
		}
		var generic any
		if json.Unmarshal(b, &generic) != nil {
			return ""
		}
		if _, ok := generic.([]any); !ok {
			if _, ok := generic.(map[string]any); !ok {
				return ""
			}
		}
		return orderText(generic)
	}
	terms := make([]string, 0, len(list))
	for _, item := range list {
		m, _ := item.(map[string]any)
		field, _ := m["field"].(string)
		dir, _ := m["direction"].(string)
		if dir == "" {
			dir = string(entgql.OrderDirectionAsc)
		}
		terms = append(terms, field+" "+dir)
	}
	return strings.Join(terms, ",")
}

// quoteHead quotes the start of a client's text, at most 120 bytes with
// its quotes, so an error never repeats a large input whole.
func quoteHead(s string) string {
	const max = 120
	n := min(len(s), 60)
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	for {
		q := strconv.QuoteToASCII(s[:n])
		if len(q) <= max {
			if n < len(s) {
				return q + " (" + strconv.Itoa(len(s)) + " bytes)"
			}
			return q
		}
		n /= 2
	}
}
