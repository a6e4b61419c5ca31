package engine

import (
	"reflect"
	"strings"
	"sync"

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
func MatchEverythingWhenEmpty(v any) any { return onFilter(v, matchEverythingWhenEmpty) }

// MatchEverythingWhenEmptyAtTop is MatchEverythingWhenEmpty for one level:
// v's nested filters must have been through it already, as they have when
// gqlgen unmarshals a filter (it calls the directive on every level,
// innermost first). Each level is looked at once, so the cost is linear in
// the filter's size, where the recursive version at every level cost its
// size times its depth. Case-folded patterns are made exact on the way
// (foldExactly), one level at a time too.
func MatchEverythingWhenEmptyAtTop(v any) any {
	return onFilter(v, func(p reflect.Value) {
		foldExactly(p)
		matchWhenEmpty(p)
	})
}

// onFilter applies f to v when v is a filter input, by value or pointer.
func onFilter(v any, f func(reflect.Value)) any {
	rv := reflect.ValueOf(v)
	switch {
	case !rv.IsValid():
		return v
	case rv.Kind() == reflect.Pointer:
		if !rv.IsNil() && isWhereInput(rv.Type()) {
			f(rv)
		}
		return v
	case isWhereInput(reflect.PointerTo(rv.Type())):
		p := reflect.New(rv.Type())
		p.Elem().Set(rv)
		f(p)
		return p.Elem().Interface()
	}
	return v
}

// matchEverythingWhenEmpty works on p, a non-nil *XWhereInput: its nested
// filters first, then itself.
func matchEverythingWhenEmpty(p reflect.Value) {
	foldExactly(p)
	fields := p.Elem()
	for _, i := range nestedFilterFields(fields.Type()) {
		f := fields.Field(i)
		if f.Kind() == reflect.Pointer {
			if !f.IsNil() {
				matchEverythingWhenEmpty(f)
			}
			continue
		}
		for j := range f.Len() {
			if item := f.Index(j); !item.IsNil() {
				matchEverythingWhenEmpty(item)
			}
		}
	}
	matchWhenEmpty(p)
}

// matchWhenEmpty gives p, whose nested filters are no longer empty, the
// predicate that is always true when it is empty itself.
func matchWhenEmpty(p reflect.Value) {
	fields := p.Elem()
	// With its nested filters no longer empty, p is empty when none of its
	// fields is set. Asking ent's P() instead built the whole subtree's
	// predicates at every level, and gqlgen calls this on every level:
	// the cost of a nested filter grew with its size times its depth, and
	// more; this check costs the fields of one level.
	if isEmptyFilter(fields) {
		add := p.MethodByName("AddPredicates")
		predicate := add.Type().In(0).Elem() // predicate.Session, predicate.Turn, ...
		add.Call([]reflect.Value{reflect.ValueOf(everyRow).Convert(predicate)})
	}
}

// isEmptyFilter reports whether a filter input has no field set, which is
// when ent's P() refuses it: a nil pointer, a false flag, an empty list.
func isEmptyFilter(fields reflect.Value) bool {
	for i := range fields.NumField() {
		f := fields.Field(i)
		if f.Kind() == reflect.Slice && f.Len() > 0 || f.Kind() != reflect.Slice && !f.IsZero() {
			return false
		}
	}
	return true
}

// everyRow is the predicate of an empty filter.
func everyRow(s *sql.Selector) {
	s.Where(sql.P(func(b *sql.Builder) { b.WriteString("TRUE") }))
}

// nestedFields caches, per filter type, nestedFilterFields' answer.
var nestedFields sync.Map // reflect.Type → []int

// nestedFilterFields returns the indices of the fields of t, a filter
// struct, that hold filters: not (a pointer), and and or (slices) and the
// edges' has...With. Reading the ~100 fields' types on every visit cost
// more than the rest of the walk.
func nestedFilterFields(t reflect.Type) []int {
	if v, ok := nestedFields.Load(t); ok {
		return v.([]int)
	}
	var out []int
	for i := range t.NumField() {
		ft := t.Field(i).Type
		if isWhereInput(ft) || ft.Kind() == reflect.Slice && isWhereInput(ft.Elem()) {
			out = append(out, i)
		}
	}
	nestedFields.Store(t, out)
	return out
}

// isWhereInput reports whether t is a pointer to one of ent's filter inputs.
func isWhereInput(t reflect.Type) bool {
	return t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct &&
		strings.HasSuffix(t.Elem().Name(), "WhereInput") && t.Elem().PkgPath() == "sessiongraph/ent"
}
