package compiled

import (
	"fmt"
	"strconv"
	"strings"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"sessiongraph/ent"
)

// The SQL of compiled reads: PostgreSQL returns each node's values as text,
// a nested page's rows as a two-dimensional text array, and Go writes the
// JSON (write.go). Every value is one text expression, so a
// node's values are a list, in the order the writer reads them: a column
// per field, and per nested page its totalCount, its hasNextPage and its
// edges' rows, as selected.

// noValues stands for a node or edge whose selection reads no value
// (only __typename): a row still needs one to be counted.
const noValues = "''"

// valueList writes a list of values, comma-separated; as a root page's
// columns (named) each is named gqlN, which marks the statement as a
// compiled read's.
type valueList struct {
	b     *entsql.Builder
	named bool
	n     int
}

// value writes one value, write writing its expression.
func (l *valueList) value(write func()) {
	if l.n > 0 {
		l.b.WriteString(", ")
	}
	l.n++
	write()
	if l.named {
		l.b.WriteString(` AS "gql` + strconv.Itoa(l.n) + `"`)
	}
}

// close writes noValues when no value was written: a row still needs one
// to be counted.
func (l *valueList) close() {
	if l.n == 0 {
		l.value(func() { l.b.WriteString(noValues) })
	}
}

// writeValues writes the node's values to l: qualify names a column of
// the node's row, depth keeps nested tables' aliases apart.
func (n *nodePlan) writeValues(l *valueList, qualify func(string) string, depth int) {
	for _, part := range n.parts {
		switch {
		case part.typename:
		case part.page != nil:
			part.page.writeValues(l, qualify(n.typ.Fields["id"].Column), depth+1)
		default:
			l.value(func() { writeValue(l.b, qualify(part.col.Column), part.col.Kind) })
		}
	}
}

// writeNodeValues writes an edge's node's values (none when the edge
// selects no node) as a list of their own.
func writeNodeValues(b *entsql.Builder, named bool, node *nodePlan, qualify func(string) string, depth int) {
	l := &valueList{b: b, named: named}
	if node != nil {
		node.writeValues(l, qualify, depth)
	}
	l.close()
}

// writeValue writes a column's value as text, NULL for NULL; the writer
// gives it the JSON of the field's GraphQL type.
func writeValue(b *entsql.Builder, col string, kind ent.CompiledKind) {
	switch kind {
	case ent.CompiledString, ent.CompiledNumber:
		// A Boolean's text is true or false; a UUID's is its canonical form.
		b.WriteString(col + "::text")
	case ent.CompiledTime:
		// JSON's text of a timestamp without time zone is ISO 8601 whatever
		// DateStyle says, with the fraction's trailing zeros cut: with a Z
		// before its closing quote it is time.RFC3339Nano in UTC.
		b.WriteString(`to_json(` + col + ` AT TIME ZONE 'UTC')::text`)
	case ent.CompiledStringMap:
		// JSON already: keys in byte order, as scalar.MarshalStringMap sorts
		// them, each string as to_json writes it.
		b.WriteString(`(SELECT '{' || coalesce(string_agg(to_json(k.key)::text || ':' || to_json(k.value)::text, ',' ORDER BY k.key COLLATE "C"), '') || '}' FROM jsonb_each_text(` + col + `) k)`)
	}
}

// writeValues writes a nested page's values for the parent whose id is
// parentID. Every read of the page's table is
//
//	FROM <table> cN WHERE cN.<parent column> = <parent id> AND <interceptors' predicates>
//
// so that a read by parent stays one a distributed table routes by it.
func (p *pagePlan) writeValues(l *valueList, parentID string, depth int) {
	b := l.b
	alias := fmt.Sprintf("c%d", depth)
	qualify := func(c string) string { return alias + "." + c }
	from := func() {
		b.WriteString(fmt.Sprintf("FROM %s %s WHERE %s.%s = %s", p.typ.Table, alias, alias, p.conn.ParentColumn, parentID))
		if pred := p.where(alias); pred != nil {
			b.WriteString(" AND (")
			b.Join(pred)
			b.WriteString(")")
		}
	}
	for _, f := range p.fields {
		switch f.Name {
		case "totalCount":
			l.value(func() {
				b.WriteString("(SELECT count(*)::text ")
				from()
				b.WriteString(")")
			})
		case "pageInfo":
			if selects(p.pageInfo, "hasNextPage") {
				l.value(func() {
					b.WriteString(fmt.Sprintf("(SELECT (count(*) > %d)::text FROM (SELECT 1 ", p.first))
					from()
					b.WriteString(fmt.Sprintf(" LIMIT %d) n)", p.first+1))
				})
			}
		case "edges":
			// ARRAY(subquery) keeps the LIMITed subquery's order: a row of
			// the two-dimensional array per edge, its node's values.
			l.value(func() {
				b.WriteString("ARRAY(SELECT ARRAY[")
				writeNodeValues(b, false, p.node, qualify, depth)
				b.WriteString("] ")
				from()
				b.WriteString(fmt.Sprintf(" ORDER BY %s LIMIT %d)::text", qualifyOrder(alias, p.order), p.first))
			})
		}
	}
}

// writeEdgeColumns writes the columns of a cursorless root page's row:
// its edge's node's values, qualify naming a column of the node's row.
func (p *rootPage) writeEdgeColumns(b *entsql.Builder, qualify func(string) string) {
	writeNodeValues(b, true, p.node, qualify, 1)
}

// writeNodeArray writes a root page's node's values as one text column,
// a text array's.
func (n *nodePlan) writeNodeArray(b *entsql.Builder, qualify func(string) string) {
	b.WriteString("ARRAY[")
	writeNodeValues(b, false, n, qualify, 1)
	b.WriteString("]::text")
}

// where is the predicate the page's interceptors add, its columns
// qualified by alias; nil when they add none.
func (p *pagePlan) where(alias string) *entsql.Predicate {
	if len(p.preds) == 0 {
		return nil
	}
	s := entsql.Dialect(dialect.Postgres).Select().From(entsql.Table(p.typ.Table).As(alias))
	for _, pred := range p.preds {
		pred(s)
	}
	return s.P()
}

func qualifyOrder(alias string, order []string) string {
	out := make([]string, len(order))
	for i, o := range order {
		out[i] = alias + "." + o
	}
	return strings.Join(out, ", ")
}
