package graph

// Compiled reads: a page of sessions whose selection is plain columns and
// first pages of their turns and refs is answered by one statement in which
// PostgreSQL writes each session's JSON, nested pages included, and the
// server only copies it out. gqlgen's execution of the same page spends
// most of its CPU on a field context, a marshaller and allocations per
// returned value; here a page of 620 objects is 20 strings.
//
// The plan is made from the field's collected selection (fragments,
// aliases, @skip and @include applied by gqlgen's CollectFields). Anything
// it does not know (a field with a resolver, a JSON field, a nested page
// with a cursor, a filter or last) leaves the whole field to gqlgen, so a
// compiled answer is never a partial one. The root page itself is read by
// entgql's own pager (ent's CompiledPage), so its filter, order, cursors and
// pageInfo are entgql's; compiled_reads_test.go compares every field both
// ways.

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"entgo.io/contrib/entgql"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"
	"github.com/vektah/gqlparser/v2/ast"

	"sessiongraph/ent"
	"sessiongraph/graph/compiled"
	"sessiongraph/graph/scalar"
)

// columnKind is how a column's value is written as JSON.
type columnKind int

const (
	textColumn      columnKind = iota // String, ID, UUID and enums: a JSON string
	numberColumn                      // Int and Boolean: the value's own text
	timeColumn                        // Time: RFC 3339 in UTC, as graphql.MarshalTime writes it
	stringMapColumn                   // StringMap (jsonb of strings): keys in Go's order
)

type column struct {
	name string
	kind columnKind
}

// compiledType is what the compiler knows of an ent type: its table, its
// plain fields, and its nested connections (Session's turns and refs).
type compiledType struct {
	gqlName string
	table   string
	fields  map[string]column
	// pages are the connections a node of this type may nest.
	pages map[string]*compiledPageType
}

// compiledPageType is a nested connection: its node type, the column that
// joins it to its parent, and how its orderBy names columns.
type compiledPageType struct {
	node        *compiledType
	parentKey   string
	orderColumn func(field string) (string, bool)
}

var (
	turnType = &compiledType{gqlName: "Turn", table: "turns", fields: map[string]column{
		"id": {"id", textColumn}, "sessionID": {"session_id", textColumn}, "number": {"number", numberColumn},
		"userMessage": {"user_message", textColumn}, "assistantMessage": {"assistant_message", textColumn},
		"assistantSummary": {"assistant_summary", textColumn}, "userTokens": {"user_tokens", numberColumn},
		"assistantTokens": {"assistant_tokens", numberColumn}, "status": {"status", textColumn},
		"startedAt": {"started_at", timeColumn}, "completedAt": {"completed_at", timeColumn},
	}}
	refType = &compiledType{gqlName: "Ref", table: "refs", fields: map[string]column{
		"id": {"id", textColumn}, "sessionID": {"session_id", textColumn}, "ref": {"ref", textColumn},
		"entityType": {"entity_type", textColumn}, "entityID": {"entity_id", textColumn}, "label": {"label", textColumn},
		"action": {"action", textColumn}, "detailLevel": {"detail_level", textColumn}, "fullTurn": {"full_turn", numberColumn},
		"turnCreated": {"turn_created", numberColumn}, "turnLastReferenced": {"turn_last_referenced", numberColumn},
		"sourceStep": {"source_step", numberColumn}, "turnPromoted": {"turn_promoted", numberColumn},
		"activeReason": {"active_reason", textColumn}, "enrichTable": {"enrich_table", textColumn},
		"enrichNameColumn": {"enrich_name_column", textColumn},
		"createdAt":        {"created_at", timeColumn}, "updatedAt": {"updated_at", timeColumn},
	}}
	sessionType = &compiledType{gqlName: "Session", table: "sessions", fields: map[string]column{
		"id": {"id", textColumn}, "tenant": {"tenant", textColumn}, "externalKey": {"external_key", textColumn},
		"userID": {"user_id", textColumn}, "domain": {"domain", textColumn}, "status": {"status", textColumn},
		"systemPrompt": {"system_prompt", textColumn}, "engagementSummary": {"engagement_summary", textColumn},
		"historySummary": {"history_summary", textColumn}, "reasoningSummary": {"reasoning_summary", textColumn},
		"currentTurn": {"current_turn", numberColumn}, "tokenizer": {"tokenizer", textColumn},
		"tokenCount": {"token_count", numberColumn}, "metadata": {"metadata", stringMapColumn},
		"ttlSeconds": {"ttl_seconds", numberColumn}, "createdAt": {"created_at", timeColumn},
		"updatedAt": {"updated_at", timeColumn}, "lastActiveAt": {"last_active_at", timeColumn},
		"expiresAt": {"expires_at", timeColumn}, "expiredAt": {"expired_at", timeColumn},
	}, pages: map[string]*compiledPageType{
		"turns": {node: turnType, parentKey: "session_id", orderColumn: orderColumnOf[ent.TurnOrderField]},
		"refs":  {node: refType, parentKey: "session_id", orderColumn: orderColumnOf[ent.RefOrderField]},
	}}
)

// orderColumnOf maps an orderBy field's enum value to its column through
// ent's own order field.
func orderColumnOf[T any, P interface {
	*T
	UnmarshalGQL(any) error
	Column() string
}](field string) (string, bool) {
	var f T
	if err := P(&f).UnmarshalGQL(field); err != nil {
		return "", false
	}
	return P(&f).Column(), true
}

// compiledSessions answers a sessions page by compiled reads, or reports
// ok false when its selection is not one they know.
func (r *queryResolver) compiledSessions(ctx context.Context, after *entgql.Cursor[uuid.UUID], first *int, before *entgql.Cursor[uuid.UUID], last *int, orderBy []*ent.SessionOrder, where *ent.SessionWhereInput) (conn *ent.SessionConnection, ok bool, err error) {
	if !compiled.Enabled(ctx) {
		return nil, false, nil
	}
	oc := graphql.GetOperationContext(ctx)
	fc := graphql.GetFieldContext(ctx)
	if oc == nil || fc == nil {
		return nil, false, nil
	}
	p, ok := planRootPage(oc, fc.Field.Selections)
	if !ok {
		return nil, false, nil
	}
	var extra func(*entsql.Selector)
	if p.node != nil {
		extra = func(s *entsql.Selector) {
			s.AppendSelectExprAs(entsql.Raw(p.node.sql(s.C, 1)), "gql")
		}
	}
	conn, texts, err := r.Client.Session.Query().CompiledPage(ctx, after, first, before, last, p.edges, p.count, extra,
		ent.WithSessionOrder(orderBy), ent.WithSessionFilter(where.Filter))
	if err != nil {
		return nil, true, err
	}
	p.cursor = scalar.CursorWriter(ctx)
	compiled.Set(ctx, conn, graphql.WriterFunc(func(w io.Writer) { p.write(w, conn, texts) }))
	return conn, true, nil
}

// rootPage is the plan of a root connection: its fields in order, written
// in Go around the nodes' JSON that PostgreSQL wrote.
type rootPage struct {
	fields []graphql.CollectedField
	edges  bool // edges are selected
	count  bool // every row is counted (totalCount, or pageInfo without edges)
	edge   []graphql.CollectedField
	node   *nodePlan
	// pageInfo's fields, by its own collection.
	pageInfo []graphql.CollectedField
	// cursor writes a cursor as gqlgen does, with this field's scope.
	cursor func(io.Writer, *ent.Cursor)
}

func planRootPage(oc *graphql.OperationContext, sel ast.SelectionSet) (*rootPage, bool) {
	p := &rootPage{fields: graphql.CollectFields(oc, sel, []string{"SessionConnection"})}
	hasPageInfo, hasTotal := false, false
	for _, f := range p.fields {
		switch f.Name {
		case "__typename":
		case "totalCount":
			hasTotal = true
		case "pageInfo":
			hasPageInfo = true
			p.pageInfo = graphql.CollectFields(oc, f.Selections, []string{"PageInfo"})
		case "edges":
			p.edges = true
			var ok bool
			if p.edge, p.node, ok = planEdges(oc, f.Selections, sessionType, true); !ok {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	p.count = hasTotal || (!p.edges && hasPageInfo)
	return p, true
}

// planEdges plans a connection's edges of nodes of type t: their node and
// __typename, and their cursor where withCursor (a nested page's cursors
// are gqlgen's).
func planEdges(oc *graphql.OperationContext, sel ast.SelectionSet, t *compiledType, withCursor bool) ([]graphql.CollectedField, *nodePlan, bool) {
	edges := graphql.CollectFields(oc, sel, []string{t.gqlName + "Edge"})
	var node *nodePlan
	for _, e := range edges {
		switch {
		case e.Name == "__typename", e.Name == "cursor" && withCursor:
		case e.Name == "node":
			n, ok := planNode(oc, t, e.Selections)
			if !ok {
				return nil, nil, false
			}
			node = n
		default:
			return nil, nil, false
		}
	}
	return edges, node, true
}

// nodePlan writes one node's JSON in SQL: a field per entry, in order.
type nodePlan struct {
	typ   *compiledType
	parts []nodePart
}

type nodePart struct {
	key      string // the response key (alias or name)
	typename bool
	col      column
	page     *pagePlan
}

func planNode(oc *graphql.OperationContext, t *compiledType, sel ast.SelectionSet) (*nodePlan, bool) {
	n := &nodePlan{typ: t}
	for _, f := range graphql.CollectFields(oc, sel, []string{t.gqlName, "Node"}) {
		part := nodePart{key: f.Alias}
		if f.Name == "__typename" {
			part.typename = true
		} else if c, ok := t.fields[f.Name]; ok && len(f.Arguments) == 0 {
			part.col = c
		} else if pt, ok := t.pages[f.Name]; ok {
			page, ok := planNestedPage(oc, pt, f)
			if !ok {
				return nil, false
			}
			part.page = page
		} else {
			return nil, false
		}
		n.parts = append(n.parts, part)
	}
	return n, true
}

// pagePlan is a nested connection's first page: totalCount, hasNextPage and
// hasPreviousPage, and edges with their nodes (no cursors).
type pagePlan struct {
	typ      *compiledPageType
	first    int
	order    []string // "column ASC|DESC", then id
	fields   []graphql.CollectedField
	pageInfo []graphql.CollectedField
	edge     []graphql.CollectedField
	node     *nodePlan
}

func planNestedPage(oc *graphql.OperationContext, pt *compiledPageType, f graphql.CollectedField) (*pagePlan, bool) {
	args := f.ArgumentMap(oc.Variables)
	p := &pagePlan{typ: pt}
	for name, v := range args {
		switch name {
		case "first":
			// pagination.go's asInt; the page limits checked the value
			// already. An empty nested page is gqlgen's: entgql answers its
			// hasNextPage false whatever the count.
			n, ok := asInt(v)
			if !ok || n <= 0 || n > 1000 {
				return nil, false
			}
			p.first = int(n)
		case "orderBy":
			order, ok := nestedOrder(pt, v)
			if !ok {
				return nil, false
			}
			p.order = order
		default: // after, before, last, where: gqlgen's
			if v != nil {
				return nil, false
			}
		}
	}
	if _, ok := args["first"]; !ok {
		return nil, false // the page defaults always give one; without it entgql reads every row
	}
	if !orderedByID(p.order) {
		p.order = append(p.order, "id ASC")
	}
	owner := pt.node.gqlName
	p.fields = graphql.CollectFields(oc, f.Selections, []string{owner + "Connection"})
	for _, c := range p.fields {
		switch c.Name {
		case "__typename", "totalCount":
		case "pageInfo":
			p.pageInfo = graphql.CollectFields(oc, c.Selections, []string{"PageInfo"})
			for _, i := range p.pageInfo {
				if i.Name != "hasNextPage" && i.Name != "hasPreviousPage" && i.Name != "__typename" {
					return nil, false // cursors of nested pages are gqlgen's
				}
			}
		case "edges":
			var ok bool
			if p.edge, p.node, ok = planEdges(oc, c.Selections, pt.node, false); !ok {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	return p, true
}

func orderedByID(order []string) bool {
	for _, o := range order {
		if strings.HasPrefix(o, "id ") {
			return true
		}
	}
	return false
}

// nestedOrder reads an orderBy value (one order or a list) into ORDER BY
// terms, as entgql's pager orders: each field in its direction.
func nestedOrder(pt *compiledPageType, v any) ([]string, bool) {
	var list []any
	switch v := v.(type) {
	case nil:
		return nil, true
	case []any:
		list = v
	case map[string]any:
		list = []any{v}
	default:
		return nil, false
	}
	var out []string
	for _, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, false
		}
		field, _ := m["field"].(string)
		col, ok := pt.orderColumn(field)
		if !ok {
			return nil, false
		}
		dir := entgql.OrderDirectionAsc
		if d, present := m["direction"]; present {
			if err := dir.UnmarshalGQL(d); err != nil {
				return nil, false
			}
		}
		out = append(out, col+" "+string(dir))
	}
	return out, true
}

// sql is the expression that writes the node's JSON: qualify names a column
// of the node's row, depth keeps nested tables' aliases apart.
func (n *nodePlan) sql(qualify func(string) string, depth int) string {
	keys, values := make([]string, len(n.parts)), make([]string, len(n.parts))
	for i, part := range n.parts {
		keys[i] = part.key
		switch {
		case part.typename:
			values[i] = quoteLiteral(strconv.Quote(n.typ.gqlName))
		case part.page != nil:
			values[i] = part.page.sql(qualify("id"), depth+1)
		default:
			values[i] = valueSQL(qualify(part.col.name), part.col.kind)
		}
	}
	return sqlObject(keys, values)
}

// sqlObject is the expression that writes a JSON object of the keys, in
// order, each with the JSON its value expression writes.
func sqlObject(keys, values []string) string {
	if len(keys) == 0 {
		return "'{}'"
	}
	var b strings.Builder
	b.WriteString("(")
	for i, k := range keys {
		sep := ","
		if i == 0 {
			sep = "{"
		}
		b.WriteString(quoteLiteral(sep + strconv.Quote(k) + ":"))
		b.WriteString(" || ")
		b.WriteString(values[i])
		b.WriteString(" || ")
	}
	b.WriteString("'}')")
	return b.String()
}

// sqlFields is sqlObject for collected fields, value giving each one's
// expression.
func sqlFields(fields []graphql.CollectedField, value func(graphql.CollectedField) string) string {
	keys, values := make([]string, len(fields)), make([]string, len(fields))
	for i, f := range fields {
		keys[i], values[i] = f.Alias, value(f)
	}
	return sqlObject(keys, values)
}

// valueSQL writes a column's value as gqlgen would: null for NULL.
func valueSQL(col string, kind columnKind) string {
	var v string
	switch kind {
	case textColumn:
		v = "to_json(" + col + ")::text"
	case numberColumn:
		v = col + "::text"
	case timeColumn:
		// time.RFC3339Nano in UTC: microseconds without trailing zeros, no
		// dot when none are left, and Z.
		v = `'"' || regexp_replace(to_char(` + col + ` AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US'), '\.?0+$', '') || 'Z"'`
	case stringMapColumn:
		// encoding/json sorts a map's keys by their bytes.
		v = `(SELECT '{' || coalesce(string_agg(to_json(k.key)::text || ':' || to_json(k.value)::text, ',' ORDER BY k.key COLLATE "C"), '') || '}' FROM jsonb_each_text(` + col + `) k)`
	}
	return "coalesce(" + v + ", 'null')"
}

// sql is the expression that writes a nested page's JSON for the parent
// whose id is parentID.
func (p *pagePlan) sql(parentID string, depth int) string {
	alias := fmt.Sprintf("c%d", depth)
	qualify := func(c string) string { return alias + "." + c }
	from := fmt.Sprintf("FROM %s %s WHERE %s.%s = %s", p.typ.node.table, alias, alias, p.typ.parentKey, parentID)
	return sqlFields(p.fields, func(f graphql.CollectedField) string {
		switch f.Name {
		case "__typename":
			return quoteLiteral(strconv.Quote(p.typ.node.gqlName + "Connection"))
		case "totalCount":
			return "(SELECT count(*)::text " + from + ")"
		case "pageInfo":
			return sqlFields(p.pageInfo, func(f graphql.CollectedField) string {
				switch f.Name {
				case "hasNextPage":
					return fmt.Sprintf("(SELECT (count(*) > %d)::text FROM (SELECT 1 %s LIMIT %d) n)", p.first, from, p.first+1)
				case "hasPreviousPage":
					return "'false'" // a first page without a cursor
				default: // __typename
					return quoteLiteral(`"PageInfo"`)
				}
			})
		default: // edges
			edge := sqlFields(p.edge, func(f graphql.CollectedField) string {
				if f.Name == "node" {
					return p.node.sql(qualify, depth)
				}
				return quoteLiteral(strconv.Quote(p.typ.node.gqlName + "Edge")) // __typename
			})
			order := qualifyOrder(alias, p.order)
			return fmt.Sprintf("(SELECT coalesce('[' || string_agg(e.j, ',' ORDER BY e.n) || ']', '[]') FROM (SELECT %s AS j, row_number() OVER (ORDER BY %s) AS n %s ORDER BY %s LIMIT %d) e)",
				edge, order, from, order, p.first)
		}
	})
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

// write writes the root connection around the nodes' JSON.
func (p *rootPage) write(w io.Writer, conn *ent.SessionConnection, texts map[*ent.Session]string) {
	writeFields(w, p.fields, func(f graphql.CollectedField) {
		switch f.Name {
		case "__typename":
			io.WriteString(w, `"SessionConnection"`)
		case "totalCount":
			io.WriteString(w, strconv.Itoa(conn.TotalCount))
		case "pageInfo":
			writePageInfo(w, p.pageInfo, &conn.PageInfo, p.cursor)
		case "edges":
			io.WriteString(w, "[")
			for j, e := range conn.Edges {
				if j > 0 {
					io.WriteString(w, ",")
				}
				p.writeEdge(w, e, texts[e.Node])
			}
			io.WriteString(w, "]")
		}
	})
}

// writeFields writes a JSON object of the fields, value writing each one's.
func writeFields(w io.Writer, fields []graphql.CollectedField, value func(graphql.CollectedField)) {
	io.WriteString(w, "{")
	for i, f := range fields {
		if i > 0 {
			io.WriteString(w, ",")
		}
		io.WriteString(w, strconv.Quote(f.Alias)+":")
		value(f)
	}
	io.WriteString(w, "}")
}

// writeEdge writes an edge whose node's JSON PostgreSQL wrote as node.
func (p *rootPage) writeEdge(w io.Writer, e *ent.SessionEdge, node string) {
	writeFields(w, p.edge, func(f graphql.CollectedField) {
		switch f.Name {
		case "__typename":
			io.WriteString(w, `"SessionEdge"`)
		case "cursor":
			p.cursor(w, &e.Cursor)
		case "node":
			writeGqlgenEscapes(w, node)
		}
	})
}

func writePageInfo(w io.Writer, fields []graphql.CollectedField, info *entgql.PageInfo[uuid.UUID], cursor func(io.Writer, *ent.Cursor)) {
	writeFields(w, fields, func(f graphql.CollectedField) {
		switch f.Name {
		case "__typename":
			io.WriteString(w, `"PageInfo"`)
		case "hasNextPage":
			io.WriteString(w, strconv.FormatBool(info.HasNextPage))
		case "hasPreviousPage":
			io.WriteString(w, strconv.FormatBool(info.HasPreviousPage))
		case "startCursor":
			cursor(w, info.StartCursor)
		case "endCursor":
			cursor(w, info.EndCursor)
		}
	})
}

// writeGqlgenEscapes copies JSON that PostgreSQL wrote, spelling its string
// escapes as gqlgen does: PostgreSQL writes a backspace and a form feed as
// \b and \f and other control characters in lower-case hex, gqlgen as
// \u0008, \u000C and upper case. Every backslash in PostgreSQL's JSON
// starts an escape, so a scan from escape to escape is exact.
func writeGqlgenEscapes(w io.Writer, s string) {
	for {
		i := strings.IndexByte(s, '\\')
		if i < 0 || i+1 >= len(s) {
			io.WriteString(w, s)
			return
		}
		io.WriteString(w, s[:i])
		switch s[i+1] {
		case 'b':
			io.WriteString(w, `\u0008`)
			s = s[i+2:]
		case 'f':
			io.WriteString(w, `\u000C`)
			s = s[i+2:]
		case 'u':
			end := min(i+6, len(s))
			io.WriteString(w, `\u`+strings.ToUpper(s[i+2:end]))
			s = s[end:]
		default:
			io.WriteString(w, s[i:i+2])
			s = s[i+2:]
		}
	}
}
