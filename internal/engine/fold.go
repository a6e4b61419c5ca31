package engine

import (
	"reflect"
	"strings"
	"unicode"

	"entgo.io/ent/dialect/sql"
)

// dotlessCapital is İ (U+0130), the one character whose lower case (i) is
// not among its case-fold equivalents: PostgreSQL's ILIKE (and ent, which
// lowers the pattern in Go) turns it into "i", so that xContainsFold: "İ"
// matched every session with an i. Go's strings.EqualFold and Unicode's
// simple case folding match İ only with itself.
const dotlessCapital = 'İ'

// foldStandIn replaces İ on both sides of a case-folded match: a
// noncharacter, which lower() leaves alone.
const foldStandIn = "\uFDD0"

// foldExactly rewrites the *ContainsFold and *EqualFold filters of p (a
// non-nil *XWhereInput) whose pattern holds an I (İ, i or I) into a
// predicate that folds case as Go's strings.EqualFold does: İ matches İ
// only, i and I never match İ, every other character as ILIKE folds it (ß
// and ẞ, the Kelvin sign and k agree in Go and PostgreSQL). The plain
// ILIKE stays in front, so an index that serves it still narrows the rows.
func foldExactly(p reflect.Value) {
	fields := p.Elem()
	for i := range fields.NumField() {
		f := fields.Field(i)
		name := fields.Type().Field(i).Name
		column, contains := strings.CutSuffix(name, "ContainsFold")
		if !contains {
			var ok bool
			if column, ok = strings.CutSuffix(name, "EqualFold"); !ok {
				continue
			}
		}
		if f.Kind() != reflect.Pointer || f.IsNil() || f.Elem().Kind() != reflect.String ||
			!strings.ContainsAny(f.Elem().String(), "iI"+string(dotlessCapital)) {
			continue
		}
		v := f.Elem().String()
		f.Set(reflect.Zero(f.Type()))
		col := snakeCase(column)
		add := p.MethodByName("AddPredicates")
		pred := func(s *sql.Selector) { s.Where(foldedMatch(s.C(col), v, contains)) }
		add.Call([]reflect.Value{reflect.ValueOf(pred).Convert(add.Type().In(0).Elem())})
	}
}

// containsFold is ent's ContainsFold on column col (as a selector names
// it) with foldExactly's rule for İ, for a filter that is not a field of
// ent's input (itemContainsFold).
func containsFold(col, v string) *sql.Predicate {
	if !strings.ContainsAny(v, "iI"+string(dotlessCapital)) {
		return sql.ContainsFold(col, v)
	}
	return foldedMatch(col, v, true)
}

// foldedMatch matches col against v (within it when contains) in any case,
// İ only with İ: the plain ILIKE first, which a trigram index serves, then
// the exact fold.
func foldedMatch(col, v string, contains bool) *sql.Predicate {
	loose := likeEscape(strings.ToLower(v))
	exact := likeEscape(strings.ToLower(strings.ReplaceAll(v, string(dotlessCapital), foldStandIn)))
	if contains {
		loose, exact = "%"+loose+"%", "%"+exact+"%"
	}
	return sql.P(func(b *sql.Builder) {
		b.Ident(col).WriteString(" ILIKE ").Arg(loose).WriteString(" AND lower(replace(").Ident(col).
			WriteString(", '" + string(dotlessCapital) + "', '" + foldStandIn + "')) LIKE ").Arg(exact).WriteString(` ESCAPE '\'`)
	})
}

// likeEscape escapes LIKE's wildcards and its escape character.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// snakeCase is the column of an ent field's Go name: ExternalKey is
// external_key, UserID user_id.
func snakeCase(name string) string {
	var b strings.Builder
	rs := []rune(name)
	for i, r := range rs {
		if unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]) ||
			(i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1]))) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}
