package graph

import (
	"fmt"
	"strconv"
	"strings"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/99designs/gqlgen/graphql"

	"sessiongraph/ent"
)

// The SQL of compiled reads: expressions that have PostgreSQL write a
// node's JSON, nested pages included, as gqlgen would write it.

// writeSQL writes the expression of the node's JSON: qualify names a column
// of the node's row, depth keeps nested tables' aliases apart.
func (n *nodePlan) writeSQL(b *entsql.Builder, qualify func(string) string, depth int) {
	sqlObject(b, len(n.parts), func(i int) string { return n.parts[i].key }, func(i int) {
		part := n.parts[i]
		switch {
		case part.typename:
			b.WriteString(quoteLiteral(strconv.Quote(n.typ.Name)))
		case part.page != nil:
			part.page.writeSQL(b, qualify(n.typ.Fields["id"].Column), depth+1)
		default:
			writeValue(b, qualify(part.col.Column), part.col.Kind)
		}
	})
}

// writeEdgeSQL writes the expression of a root page's edge's JSON (a
// cursorless one: its node and __typename), qualify naming a column of the
// node's row.
func (p *rootPage) writeEdgeSQL(b *entsql.Builder, qualify func(string) string) {
	sqlFields(b, p.edge, func(f graphql.CollectedField) {
		if f.Name == "node" {
			p.node.writeSQL(b, qualify, 1)
			return
		}
		b.WriteString(quoteLiteral(`"SessionEdge"`)) // __typename
	})
}

// sqlObject writes the expression of a JSON object of n keys, in order,
// value writing each one's JSON expression.
func sqlObject(b *entsql.Builder, n int, key func(int) string, value func(int)) {
	if n == 0 {
		b.WriteString("'{}'")
		return
	}
	b.WriteString("(")
	for i := range n {
		sep := ","
		if i == 0 {
			sep = "{"
		}
		b.WriteString(quoteLiteral(sep + strconv.Quote(key(i)) + ":"))
		b.WriteString(" || ")
		value(i)
		b.WriteString(" || ")
	}
	b.WriteString("'}')")
}

// sqlFields is sqlObject for collected fields.
func sqlFields(b *entsql.Builder, fields []graphql.CollectedField, value func(graphql.CollectedField)) {
	sqlObject(b, len(fields), func(i int) string { return fields[i].Alias }, func(i int) { value(fields[i]) })
}

// writeValue writes a column's value as gqlgen's marshaller of its type
// does: null for NULL.
func writeValue(b *entsql.Builder, col string, kind ent.CompiledKind) {
	b.WriteString("coalesce(")
	switch kind {
	case ent.CompiledString:
		b.WriteString("to_json(" + col + ")::text")
	case ent.CompiledNumber:
		b.WriteString(col + "::text")
	case ent.CompiledTime:
		// time.RFC3339Nano in UTC: microseconds without trailing zeros, no
		// dot when none are left, and Z. JSON's text of a timestamp without
		// time zone is that without the Z (ISO 8601 whatever DateStyle
		// says, the fraction's trailing zeros cut), so the Z goes before
		// its closing quote: cheaper than formatting with to_char and
		// cutting with a regular expression.
		b.WriteString(`left(to_json(` + col + ` AT TIME ZONE 'UTC')::text, -1) || 'Z"'`)
	case ent.CompiledStringMap:
		// Keys in byte order, as scalar.MarshalStringMap sorts them; each
		// string as to_json writes a String field's.
		b.WriteString(`(SELECT '{' || coalesce(string_agg(to_json(k.key)::text || ':' || to_json(k.value)::text, ',' ORDER BY k.key COLLATE "C"), '') || '}' FROM jsonb_each_text(` + col + `) k)`)
	}
	b.WriteString(", 'null')")
}

// writeSQL writes the expression of a nested page's JSON for the parent
// whose id is parentID. Every read of the page's table is
//
//	FROM <table> cN WHERE cN.<parent column> = <parent id> AND <interceptors' predicates>
//
// so that a read by parent stays one a distributed table routes by it.
func (p *pagePlan) writeSQL(b *entsql.Builder, parentID string, depth int) {
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
	nodeName := p.typ.Name
	sqlFields(b, p.fields, func(f graphql.CollectedField) {
		switch f.Name {
		case "__typename":
			b.WriteString(quoteLiteral(strconv.Quote(nodeName + "Connection")))
		case "totalCount":
			b.WriteString("(SELECT count(*)::text ")
			from()
			b.WriteString(")")
		case "pageInfo":
			sqlFields(b, p.pageInfo, func(f graphql.CollectedField) {
				switch f.Name {
				case "hasNextPage":
					b.WriteString(fmt.Sprintf("(SELECT (count(*) > %d)::text FROM (SELECT 1 ", p.first))
					from()
					b.WriteString(fmt.Sprintf(" LIMIT %d) n)", p.first+1))
				case "hasPreviousPage":
					b.WriteString("'false'") // a first page without a cursor
				default: // __typename
					b.WriteString(quoteLiteral(`"PageInfo"`))
				}
			})
		default: // edges
			// string_agg takes the rows in the order the LIMITed subquery
			// gives them: an aggregate over a sorted subquery, with nothing
			// else at its level (no join) to reorder them, as PostgreSQL's
			// manual (Aggregate Expressions) describes. An ORDER BY in the
			// aggregate would sort each parent's rows a second time.
			order := qualifyOrder(alias, p.order)
			b.WriteString("(SELECT '[' || coalesce(string_agg(e.j, ','), '') || ']' FROM (SELECT ")
			sqlFields(b, p.edge, func(f graphql.CollectedField) {
				if f.Name == "node" {
					p.node.writeSQL(b, qualify, depth)
					return
				}
				b.WriteString(quoteLiteral(strconv.Quote(nodeName + "Edge"))) // __typename
			})
			b.WriteString(" AS j ")
			from()
			b.WriteString(fmt.Sprintf(" ORDER BY %s LIMIT %d) e)", order, p.first))
		}
	})
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

// quoteLiteral is s as an SQL string literal. Response keys are GraphQL
// names and type names, so s never holds a quote; doubling is for safety.
func quoteLiteral(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
