package engine

import (
	"reflect"
	"strings"

	"entgo.io/ent/dialect/sql"
)

// MatchEverythingWhenEmpty gives ent's generated filter inputs (the
// XWhereInput types, by value or by pointer) the meaning an empty filter
// has for a person: it matches every row. ent refuses an empty input
// anywhere but at the top ({not: {}}, {and: [{}]} and {hasTurnsWith: [{}]}
// failed, and the dashboard sends {and: [{}]} when no filter is set), and
// at the top a caller that tests for "empty" with errors.Is also matched
// {and: [{}, {tenant: ...}]} as empty, which expired every session. Each
// empty filter in v, v included, gets a predicate that is always true, so
// {} matches all, {not: {}} nothing, and {and: [{}, X]} what X matches.
func MatchEverythingWhenEmpty(v any) any {
	rv := reflect.ValueOf(v)
	switch {
	case !rv.IsValid():
		return v
	case rv.Kind() == reflect.Pointer:
		if !rv.IsNil() && isWhereInput(rv.Type()) {
			matchEverythingWhenEmpty(rv)
		}
		return v
	case isWhereInput(reflect.PointerTo(rv.Type())):
		p := reflect.New(rv.Type())
		p.Elem().Set(rv)
		matchEverythingWhenEmpty(p)
		return p.Elem().Interface()
	}
	return v
}

// matchEverythingWhenEmpty works on p, a non-nil *XWhereInput: its nested
// filters first, then itself.
func matchEverythingWhenEmpty(p reflect.Value) {
	foldExactly(p)
	fields := p.Elem()
	for i := range fields.NumField() {
		f := fields.Field(i)
		switch {
		case isWhereInput(f.Type()) && !f.IsNil():
			matchEverythingWhenEmpty(f)
		case f.Kind() == reflect.Slice && isWhereInput(f.Type().Elem()):
			for j := range f.Len() {
				if item := f.Index(j); !item.IsNil() {
					matchEverythingWhenEmpty(item)
				}
			}
		}
	}
	// With its nested filters no longer empty, P fails only when p itself
	// is empty.
	if res := p.MethodByName("P").Call(nil); !res[1].IsNil() {
		add := p.MethodByName("AddPredicates")
		predicate := add.Type().In(0).Elem() // predicate.Session, predicate.Turn, ...
		add.Call([]reflect.Value{reflect.ValueOf(everyRow).Convert(predicate)})
	}
}

// everyRow is the predicate of an empty filter.
func everyRow(s *sql.Selector) {
	s.Where(sql.P(func(b *sql.Builder) { b.WriteString("TRUE") }))
}

// isWhereInput reports whether t is a pointer to one of ent's filter inputs.
func isWhereInput(t reflect.Type) bool {
	return t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct &&
		strings.HasSuffix(t.Elem().Name(), "WhereInput") && t.Elem().PkgPath() == "sessiongraph/ent"
}
