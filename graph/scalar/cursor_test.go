package scalar

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vmihailenco/msgpack/v5"

	"sessiongraph/internal/apperr"
)

var scope = CursorScope{Field: "Session.turns", Parent: "0190a5b4-0000-7000-8000-000000000001", Order: "NUMBER ASC"}

// Every value an order holds comes back from its cursor as it went in,
// and the cursor's text is the one spelling of it that is taken.
func TestCursorsRoundTripEveryOrderValue(t *testing.T) {
	at := time.Date(2026, 11, 25, 23, 30, 0, 123456789, time.UTC)
	for _, v := range []any{nil, 0, 1, 127, 128, -1, -200, 70000, int64(1) << 40, "ACTIVE", "", true, 2.5, at,
		[]any{"EXPIRED", at}, []any{3, "x"}, &at, (*time.Time)(nil), status("EXPIRED")} {
		text := EncodeCursor(Cursor{ID: uuid.New(), Value: v}, scope)
		wc, err := decodeCursor(text)
		require.NoError(t, err, "%#v", v)
		if tv, ok := v.(time.Time); ok {
			assert.True(t, tv.Equal(wc.Value.(time.Time)))
		} else if n, ok := v.(int); ok {
			assert.Equal(t, n, wc.Value)
		}
		assert.Equal(t, scope.tag(), wc.Scope)
	}
}

type status string

// Whatever spelling differs from the one handed out is refused, even when
// it decodes to the same bytes.
func TestCursorsAreReadStrictly(t *testing.T) {
	// An id whose text has both + and / in the standard alphabet.
	var id uuid.UUID
	for i := range 1 << 16 {
		id = uuid.New()
		id[0], id[1] = byte(i), byte(i>>8)
		text := EncodeCursor(Cursor{ID: id}, scope)
		if strings.Contains(text, "+") && strings.Contains(text, "/") {
			break
		}
	}
	text := EncodeCursor(Cursor{ID: id, Value: 7}, scope)
	require.True(t, strings.ContainsAny(text, "+/"), text)
	raw, err := base64.RawStdEncoding.DecodeString(text)
	require.NoError(t, err)
	_, err = decodeCursor(text)
	require.NoError(t, err)

	bad := map[string]string{
		"URL alphabet":    base64.RawURLEncoding.EncodeToString(raw),
		"padded":          base64.StdEncoding.EncodeToString(raw) + strings.Repeat("=", 4*min(1, len(text)%4)),
		"a byte appended": base64.RawStdEncoding.EncodeToString(append(raw, 0)),
		"a byte cut":      base64.RawStdEncoding.EncodeToString(raw[:len(raw)-1]),
		"empty":           "",
		"a space":         text[:4] + " " + text[4:],
	}
	if len(text)%4 != 0 {
		bad["trailing bits"] = text[:len(text)-1] + string(flipLowBit(text[len(text)-1]))
	}
	// Non-minimal msgpack of the same cursor: the value 7 as a 64-bit int.
	long, err := encodeLong(id)
	require.NoError(t, err)
	bad["a longer encoding"] = long
	for how, s := range bad {
		_, err := decodeCursor(s)
		assert.Error(t, err, how)
	}
}

func flipLowBit(c byte) byte {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	return alphabet[strings.IndexByte(alphabet, c)|1]
}

// encodeLong writes the cursor of id and the value 7 with 7 as a 64-bit
// int, which msgpack reads back as the same value.
func encodeLong(id uuid.UUID) (string, error) {
	b, err := msgpack.Marshal(wireCursor{ID: id, Value: int64(7), Scope: scope.tag()})
	return base64.RawStdEncoding.EncodeToString(b), err
}

// A refusal quotes at most 120 bytes of what it was given.
func TestCursorRefusalQuotesOnlyTheStart(t *testing.T) {
	for _, s := range []string{strings.Repeat("A", 1<<20), strings.Repeat("\xff", 1<<20), strings.Repeat("é", 1<<19), "short"} {
		_, err := UnmarshalCursor(context.Background(), s)
		var e *apperr.Error
		require.True(t, errors.As(err, &e))
		assert.Equal(t, apperr.InvalidCursor, e.Code)
		q := quoteHead(s)
		if i := strings.LastIndex(q, `"`); i >= 0 {
			assert.LessOrEqual(t, i+1, 120, q)
		}
		assert.Less(t, len(e.Message), 260, e.Message)
	}
}

// Each part of a scope is told apart in the refusal.
func TestCursorScopeNamesWhatDiffers(t *testing.T) {
	tag := scope.tag()
	other := scope
	other.Field = "Session.refs"
	assert.ErrorContains(t, other.admits(tag, "Session", true), "handed out by another connection, not Session.refs")
	other = scope
	other.Parent = "another"
	assert.ErrorContains(t, other.admits(tag, "Session", true), "handed out by Session.turns of another Session")
	assert.NoError(t, other.admits(tag, "Session", false), "the parent is not checked where it is not known")
	other = scope
	other.Order = "NUMBER DESC"
	assert.ErrorContains(t, other.admits(tag, "Session", true), "handed out by Session.turns with another orderBy")
	assert.NoError(t, scope.admits(tag, "Session", true))
}

// BenchmarkCursorRoundTrip is a cursor of a two-field order written and
// read back, as each edge of a page and each after or before costs.
func BenchmarkCursorRoundTrip(b *testing.B) {
	c := Cursor{ID: uuid.New(), Value: []any{"ACTIVE", time.Now()}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeCursor(EncodeCursor(c, scope)); err != nil {
			b.Fatal(err)
		}
	}
}

// turnsField is a Session.turns field as gqlgen collects it, ordered by
// $orderBy, under a session.
func turnsField() (*graphql.FieldContext, *graphql.OperationContext) {
	def := &ast.FieldDefinition{Name: "turns", Type: ast.NonNullNamedType("TurnConnection", nil), Arguments: ast.ArgumentDefinitionList{
		{Name: "first", Type: ast.NamedType("Int", nil)}, {Name: "last", Type: ast.NamedType("Int", nil)},
		{Name: "orderBy", Type: ast.ListType(ast.NonNullNamedType("TurnOrder", nil), nil)}}}
	field := &ast.Field{Name: "turns", Alias: "turns", Definition: def, Arguments: ast.ArgumentList{
		{Name: "orderBy", Value: &ast.Value{Kind: ast.Variable, Raw: "orderBy"}}}}
	type session struct{ ID uuid.UUID }
	parent := &graphql.FieldContext{Result: &session{ID: uuid.MustParse(scope.Parent)}}
	fc := &graphql.FieldContext{Object: "Session", Field: graphql.CollectedField{Field: field}, Parent: parent}
	oc := &graphql.OperationContext{Variables: map[string]any{"orderBy": []any{map[string]any{"field": "NUMBER"}}}}
	return fc, oc
}

// The scope of a field as gqlgen resolves it is the one written in its
// cursors: its type and name, its parent's id and its orderBy.
func TestScopeOfAFieldContext(t *testing.T) {
	fc, oc := turnsField()
	got, ok := ScopeOf(fc, oc)
	require.True(t, ok)
	assert.Equal(t, scope, got)
}

// BenchmarkScopeOf is what finding a connection's scope costs each cursor
// gqlgen writes.
func BenchmarkScopeOf(b *testing.B) {
	fc, oc := turnsField()
	b.ReportAllocs()
	for b.Loop() {
		ScopeOf(fc, oc)
	}
}
