package graph

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/vektah/gqlparser/v2/ast"

	"sessiongraph/ent"
	"sessiongraph/graph/scalar"
)

// cursorFits reports whether the order value a cursor handed out by the
// connection conn with its orderBy holds has the shape of the cursors conn
// hands out: one value per term of its orderBy (a list of them for a list
// of orders, the value alone for one order), each of the type ent reads for
// that order field. A cursor's tag is computable, so a forged cursor of
// another shape reached ent's pager or PostgreSQL and answered INTERNAL. A
// cursor of another connection or orderBy is left to the check of its
// scope, which says so (scalar.UnmarshalCursor).
func cursorFits(conn *ast.Field, cursor scalar.SpelledCursor, vars map[string]any) error {
	if conn == nil || conn.ObjectDefinition == nil || !isConnection(conn) {
		return nil
	}
	order := argumentValue(conn, "orderBy", vars)
	if !cursor.From(conn.ObjectDefinition.Name+"."+conn.Name, order) {
		return nil
	}
	node := strings.TrimSuffix(conn.Definition.Type.Name(), "Connection")
	value := cursor.Value
	if def := conn.Definition.Arguments.ForName("orderBy"); def == nil || def.Type.Elem == nil {
		term, _ := asObject(order)
		if field, _ := term["field"].(string); field != "" {
			return fitsOrderField(node, field, value)
		}
		if value != nil {
			return fmt.Errorf("this cursor holds an order value, but %s.%s pages by id alone%s", conn.ObjectDefinition.Name, conn.Name, sameOrder)
		}
		return nil
	}
	terms, ok := asList(order)
	if !ok && order != nil { // one order given for a list of them
		terms = []any{order}
	}
	values, ok := value.([]any)
	if (!ok && value != nil) || len(values) != len(terms) {
		return fmt.Errorf("this cursor holds %s, but %s.%s with this orderBy pages by %d%s",
			orderValueCount(value), conn.ObjectDefinition.Name, conn.Name, len(terms), sameOrder)
	}
	for i, term := range terms {
		obj, _ := asObject(term)
		field, _ := obj["field"].(string)
		if err := fitsOrderField(node, field, values[i]); err != nil {
			return err
		}
	}
	return nil
}

const sameOrder = ": pass back endCursor or startCursor from the same field with the same orderBy"

func orderValueCount(value any) string {
	switch values := value.(type) {
	case nil:
		return "no order values"
	case []any:
		if len(values) == 1 {
			return "1 order value"
		}
		return fmt.Sprintf("%d order values", len(values))
	}
	return "one order value, not a list"
}

// fitsOrderField reports whether v is a value of node's order field.
func fitsOrderField(node, field string, v any) error {
	typeOf := orderFieldTypes[node]
	if typeOf == nil {
		return nil
	}
	t, ok := typeOf(field)
	if !ok {
		return nil // not a field of the order: the enum's own check refuses it
	}
	nullable := t.Kind() == reflect.Pointer
	if nullable {
		t = t.Elem()
	}
	switch {
	case v == nil && nullable:
		return nil
	case v == nil:
		return fmt.Errorf("this cursor holds no value for %s, which is never null%s", field, sameOrder)
	case reflect.TypeOf(v) != cursorForm(t):
		return fmt.Errorf("this cursor holds %s for %s, which orders by %s%s", kindName(reflect.TypeOf(v)), field, kindName(cursorForm(t)), sameOrder)
	}
	return nil
}

// cursorForm is the type a cursor holds a value of type t in, once read
// (scalar.orderValue's forms): a named string (an enum) as a string, every
// integer as an int.
func cursorForm(t reflect.Type) reflect.Type {
	if t == reflect.TypeFor[time.Time]() {
		return t
	}
	switch t.Kind() {
	case reflect.String:
		return reflect.TypeFor[string]()
	case reflect.Bool:
		return reflect.TypeFor[bool]()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return reflect.TypeFor[int]()
	case reflect.Float32, reflect.Float64:
		return reflect.TypeFor[float64]()
	}
	return t
}

// kindName names a cursor value's type for a person.
func kindName(t reflect.Type) string {
	switch t {
	case reflect.TypeFor[time.Time]():
		return "a time"
	case reflect.TypeFor[string]():
		return "a string"
	case reflect.TypeFor[int]():
		return "an integer"
	case reflect.TypeFor[float64]():
		return "a number"
	case reflect.TypeFor[bool]():
		return "a boolean"
	case reflect.TypeFor[[]any]():
		return "a list"
	}
	return t.String()
}

// orderFieldTypes gives, for each node type that pages, the Go type of the
// value an order field (by its name in the schema: CREATED_AT) reads from a
// node: what ent writes into that field's cursors.
var orderFieldTypes = map[string]func(field string) (reflect.Type, bool){
	"APIKey":         orderFieldType[ent.APIKeyOrderField, ent.APIKey],
	"Artifact":       orderFieldType[ent.ArtifactOrderField, ent.Artifact],
	"ContextReceipt": orderFieldType[ent.ContextReceiptOrderField, ent.ContextReceipt],
	"EntityType":     orderFieldType[ent.EntityTypeOrderField, ent.EntityType],
	"Event":          orderFieldType[ent.EventOrderField, ent.Event],
	"Ref":            orderFieldType[ent.RefOrderField, ent.Ref],
	"Session":        orderFieldType[ent.SessionOrderField, ent.Session],
	"StepResult":     orderFieldType[ent.StepResultOrderField, ent.StepResult],
	"Turn":           orderFieldType[ent.TurnOrderField, ent.Turn],
}

// orderFieldType reads the order field name of F (ent's SessionOrderField)
// and returns the type of what its Value reads from a zero node N.
func orderFieldType[F any, N any, PF interface {
	*F
	UnmarshalGQL(any) error
}](name string) (reflect.Type, bool) {
	var f F
	if PF(&f).UnmarshalGQL(name) != nil {
		return nil, false
	}
	value, ok := reflect.ValueOf(f).FieldByName("Value").Interface().(func(*N) (ent.Value, error))
	if !ok {
		return nil, false
	}
	v, err := value(new(N))
	if err != nil || v == nil {
		return nil, false
	}
	return reflect.TypeOf(v), true
}
