package compiled

import (
	"strconv"

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
	// preds are the request's predicates of each nested page, by its
	// index (rootPage.predicates).
	preds [][]func(*entsql.Selector)
}

// value writes one value, write writing its expression.
func (l *valueList) value(write func()) {
	if l.n > 0 {
		l.b.WriteString(", ")
	}
	l.n++
	write()
	if l.named {
		l.b.WriteString(` AS "gql`)
		l.b.WriteString(strconv.Itoa(l.n))
		l.b.WriteByte('"')
	}
}

// close writes noValues when no value was written: a row still needs one
// to be counted.
func (l *valueList) close() {
	if l.n == 0 {
		l.value(func() { l.b.WriteString(noValues) })
	}
}

// row names the columns of one table's row in a statement: prefix is
// the table's name or alias and a dot, quoted whether a column's name is
// quoted after it (as ent's builder quotes the columns of a table it
// names). The statement's text is written piece by piece, with no string
// made per column.
type row struct {
	prefix string
	quoted bool
}

// selectorRow names the columns of s's table as s.C names them.
func selectorRow(s *entsql.Selector) row { return row{prefix: s.C(""), quoted: true} }

// column writes the column col of the row.
func (r row) column(b *entsql.Builder, col string) {
	b.WriteString(r.prefix)
	if r.quoted {
		b.WriteByte('"')
		b.WriteString(col)
		b.WriteByte('"')
	} else {
		b.WriteString(col)
	}
}

// writeValues writes the node's values to l, the node being r, depth
// keeping nested tables' aliases apart.
func (n *nodePlan) writeValues(l *valueList, r row, depth int) {
	for _, part := range n.parts {
		switch {
		case part.typename:
		case part.page != nil:
			part.page.writeValues(l, r, n.typ.Fields["id"].Column, depth+1)
		default:
			l.value(func() { writeValue(l.b, r, part.col.Column, part.col.Kind) })
		}
	}
}

// writeNodeValues writes an edge's node's values (none when the edge
// selects no node) as a list of their own.
func writeNodeValues(b *entsql.Builder, named bool, node *nodePlan, r row, depth int, preds [][]func(*entsql.Selector)) {
	l := valueList{b: b, named: named, preds: preds}
	if node != nil {
		node.writeValues(&l, r, depth)
	}
	l.close()
}

// writeValue writes the value of r's column col as text, NULL for NULL;
// the writer gives it the JSON of the field's GraphQL type.
func writeValue(b *entsql.Builder, r row, col string, kind ent.CompiledKind) {
	switch kind {
	case ent.CompiledString, ent.CompiledNumber:
		// A Boolean's text is true or false; a UUID's is its canonical form.
		r.column(b, col)
		b.WriteString("::text")
	case ent.CompiledTime:
		// JSON's text of a timestamp without time zone is ISO 8601 whatever
		// DateStyle says, with the fraction's trailing zeros cut: with a Z
		// before its closing quote it is time.RFC3339Nano in UTC.
		b.WriteString(`to_json(`)
		r.column(b, col)
		b.WriteString(` AT TIME ZONE 'UTC')::text`)
	case ent.CompiledStringMap:
		// JSON already: keys in byte order, as scalar.MarshalStringMap sorts
		// them, each string as to_json writes it.
		b.WriteString(`(SELECT '{' || coalesce(string_agg(to_json(k.key)::text || ':' || to_json(k.value)::text, ',' ORDER BY k.key COLLATE "C"), '') || '}' FROM jsonb_each_text(`)
		r.column(b, col)
		b.WriteString(`) k)`)
	}
}

// writeValues writes a nested page's values for the parent row's column
// parentID. Every read of the page's table is
//
//	FROM <table> cN WHERE cN.<parent column> = <parent id> AND <interceptors' predicates>
//
// so that a read by parent stays one a distributed table routes by it.
func (p *pagePlan) writeValues(l *valueList, parent row, parentID string, depth int) {
	b := l.b
	alias := "c" + strconv.Itoa(depth)
	r := row{prefix: alias + "."}
	from := func() {
		b.WriteString("FROM ")
		b.WriteString(p.typ.Table)
		b.WriteByte(' ')
		b.WriteString(alias)
		b.WriteString(" WHERE ")
		r.column(b, p.conn.ParentColumn)
		b.WriteString(" = ")
		parent.column(b, parentID)
		if pred := p.where(alias, l.preds[p.index]); pred != nil {
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
					b.WriteString("(SELECT (count(*) > ")
					b.WriteString(strconv.Itoa(p.first))
					b.WriteString(")::text FROM (SELECT 1 ")
					from()
					b.WriteString(" LIMIT ")
					b.WriteString(strconv.Itoa(p.first + 1))
					b.WriteString(") n)")
				})
			}
		case "edges":
			// ARRAY(subquery) keeps the LIMITed subquery's order: a row of
			// the two-dimensional array per edge, its node's values.
			l.value(func() {
				b.WriteString("ARRAY(SELECT ARRAY[")
				writeNodeValues(b, false, p.node, r, depth, l.preds)
				b.WriteString("] ")
				from()
				b.WriteString(" ORDER BY ")
				for i, o := range p.order {
					if i > 0 {
						b.WriteString(", ")
					}
					r.column(b, o)
				}
				b.WriteString(" LIMIT ")
				b.WriteString(strconv.Itoa(p.first))
				b.WriteString(")::text")
			})
		}
	}
}

// writeEdgeColumns writes the columns of a cursorless root page's row:
// its edge's node's values, the node being r, preds its nested pages'.
func (p *rootPage) writeEdgeColumns(b *entsql.Builder, r row, preds [][]func(*entsql.Selector)) {
	writeNodeValues(b, true, p.node, r, 1, preds)
}

// writeNodeArray writes a root page's node's values as one text column,
// a text array's, the node being r, preds its nested pages'.
func (n *nodePlan) writeNodeArray(b *entsql.Builder, r row, preds [][]func(*entsql.Selector)) {
	b.WriteString("ARRAY[")
	writeNodeValues(b, false, n, r, 1, preds)
	b.WriteString("]::text")
}

// where is the predicate preds (the page's interceptors') add, its
// columns qualified by alias; nil when they add none.
func (p *pagePlan) where(alias string, preds []func(*entsql.Selector)) *entsql.Predicate {
	if len(preds) == 0 {
		return nil
	}
	s := entsql.Dialect(dialect.Postgres).Select().From(entsql.Table(p.typ.Table).As(alias))
	for _, pred := range preds {
		pred(s)
	}
	return s.P()
}
