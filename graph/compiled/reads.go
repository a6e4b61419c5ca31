package compiled

import (
	"context"
	"encoding/json"
	"io"
	"strings"

	"entgo.io/contrib/entgql"
	entsql "entgo.io/ent/dialect/sql"
	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/vektah/gqlparser/v2/ast"

	"sessiongraph/ent"
	"sessiongraph/graph/model"
	"sessiongraph/graph/scalar"
	"sessiongraph/internal/readwatch"
)

// sessionType is the root page's node type.
var sessionType = ent.CompiledTypes["Session"]

// Query runs a read's one statement (query, with args) and hands its rows
// to rows, which must not keep them: the store's Query, through pgx.
type Query func(ctx context.Context, query string, args []any, rows func(pgx.Rows) error) error

// Sessions answers the Query.sessions field of ctx (gqlgen's field context)
// with these arguments by a compiled read, or reports ok false when its
// selection is not one compiled reads know: gqlgen answers it then. With ok,
// err is the read's error. A cursorless page's statement runs through query.
func Sessions(ctx context.Context, client *ent.Client, query Query, after *entgql.Cursor[uuid.UUID], first *int, before *entgql.Cursor[uuid.UUID], last *int, orderBy []*ent.SessionOrder, where *ent.SessionWhereInput) (conn *model.SessionConnection, ok bool, err error) {
	oc := graphql.GetOperationContext(ctx)
	fc := graphql.GetFieldContext(ctx)
	if oc == nil || fc == nil {
		return nil, false, nil
	}
	pl := planner{oc: oc}
	// The page's statements run detached: no goroutine of database/sql's
	// per statement, and the request's end still ends them.
	read := readwatch.Detach(ctx)
	p, edgeSQL, shared, ok, err := pl.rememberedRootPage(fc.Field.Field, fc.Field.Selections)
	if !ok || err != nil {
		return nil, err != nil, err
	}
	preds, ok, err := p.predicates(ctx, client)
	if !ok || err != nil {
		return nil, err != nil, err
	}
	if p.cursorless && first != nil && *first > 0 && last == nil {
		values := func(s *entsql.Selector) {
			s.AppendSelectExpr(entsql.ExprFunc(func(b *entsql.Builder) { p.writeEdgeColumns(b, selectorRow(s), preds) }))
		}
		if edgeSQL != "" {
			values = func(s *entsql.Selector) { s.AppendSelectExpr(entsql.Expr(edgeSQL)) }
		}
		e := &edgeRows{page: p, first: *first}
		run := func(ctx context.Context, sql string, args []any) (int, error) {
			err := query(ctx, sql, args, e.read)
			return e.rows, err
		}
		info, ok, err := client.Session.Query().CompiledEdges(read, after, *first, before, values, run,
			ent.WithSessionOrder(orderBy), ent.WithSessionFilter(where.Filter))
		if ok {
			if err != nil {
				return nil, true, err
			}
			page := &ent.SessionConnection{PageInfo: info}
			return &model.SessionConnection{
				SessionConnection: page,
				Compiled:          graphql.WriterFunc(func(w io.Writer) { p.writeEdges(w, page, e.edges) }),
			}, true, nil
		}
	}
	var extra func(*entsql.Selector)
	if p.node != nil {
		extra = func(s *entsql.Selector) {
			s.AppendSelectExprAs(entsql.ExprFunc(func(b *entsql.Builder) { p.node.writeNodeArray(b, selectorRow(s), preds) }), "gql")
		}
	}
	limit := 0 // the rows CompiledPage asks: the page's and one past it
	if first != nil {
		limit = *first + 1
	} else if last != nil {
		limit = *last + 1
	}
	page, texts, err := client.Session.Query().CompiledPage(read, after, first, before, last, p.edges, p.count, selects(p.edge, "cursor"), extra,
		pageRows(query, min(limit, maxPageRows)), ent.WithSessionOrder(orderBy), ent.WithSessionFilter(where.Filter))
	if err != nil {
		return nil, true, err
	}
	nodes, err := p.nodesJSON(texts)
	if err != nil {
		return nil, true, err
	}
	if shared {
		own := *p
		p = &own
	}
	p.cursor = scalar.CursorWriter(ctx)
	return &model.SessionConnection{
		SessionConnection: page,
		Compiled:          graphql.WriterFunc(func(w io.Writer) { p.write(w, page, nodes) }),
	}, true, nil
}

// planner plans the compiled reads of one field from its selection, which
// depends on the operation's document and variables alone; pages collects
// the nested pages it plans.
type planner struct {
	oc    *graphql.OperationContext
	pages *[]*pagePlan
}

// rootPage is the plan of a root connection: its fields in order, written
// in Go, nodes included, from the values PostgreSQL returned.
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
	// cursorless is a selection that needs no row's own values but its
	// node's: no cursor, no totalCount, edges selected. The page's rows are
	// then its nodes' values alone (ent's CompiledEdges).
	cursorless bool
	// pages are the pages its nodes nest, at every depth: pagePlan.index
	// is each one's place here.
	pages []*pagePlan
}

func (pl planner) rootPage(sel ast.SelectionSet) (*rootPage, bool, error) {
	p := &rootPage{fields: graphql.CollectFields(pl.oc, sel, []string{"SessionConnection"})}
	pl.pages = &p.pages
	hasPageInfo, hasTotal := false, false
	for _, f := range p.fields {
		switch f.Name {
		case "__typename":
		case "totalCount":
			hasTotal = true
		case "pageInfo":
			hasPageInfo = true
			p.pageInfo = graphql.CollectFields(pl.oc, f.Selections, []string{"PageInfo"})
		case "edges":
			p.edges = true
			var ok bool
			var err error
			if p.edge, p.node, ok, err = pl.edges(f.Selections, sessionType, true); !ok || err != nil {
				return nil, false, err
			}
		default:
			return nil, false, nil
		}
	}
	p.count = hasTotal || (!p.edges && hasPageInfo)
	p.cursorless = p.edges && !hasTotal && !selects(p.edge, "cursor") &&
		!selects(p.pageInfo, "startCursor") && !selects(p.pageInfo, "endCursor")
	return p, true, nil
}

// edges plans a connection's edges of nodes of type t: their node and
// __typename, and their cursor where withCursor (a nested page's cursors
// are gqlgen's).
func (pl planner) edges(sel ast.SelectionSet, t *ent.CompiledType, withCursor bool) ([]graphql.CollectedField, *nodePlan, bool, error) {
	edges := graphql.CollectFields(pl.oc, sel, []string{t.Name + "Edge"})
	var node *nodePlan
	for _, e := range edges {
		switch {
		case e.Name == "__typename", e.Name == "cursor" && withCursor:
		case e.Name == "node":
			n, ok, err := pl.node(t, e.Selections)
			if !ok || err != nil {
				return nil, nil, false, err
			}
			node = n
		default:
			return nil, nil, false, nil
		}
	}
	return edges, node, true, nil
}

// nodePlan is one node's fields, in order: their values are read in SQL
// (sql.go) and their JSON written in Go (write.go).
type nodePlan struct {
	typ   *ent.CompiledType
	parts []nodePart
}

type nodePart struct {
	key      string // the response key (alias or name)
	typename bool
	col      ent.CompiledField
	page     *pagePlan
}

func (pl planner) node(t *ent.CompiledType, sel ast.SelectionSet) (*nodePlan, bool, error) {
	n := &nodePlan{typ: t}
	for _, f := range graphql.CollectFields(pl.oc, sel, []string{t.Name, "Node"}) {
		part := nodePart{key: f.Alias}
		if f.Name == "__typename" {
			part.typename = true
		} else if c, ok := t.Fields[f.Name]; ok && c.Kind != ent.CompiledNone && len(f.Arguments) == 0 {
			part.col = c
		} else if conn, ok := t.Connections[f.Name]; ok {
			page, ok, err := pl.nestedPage(conn, f)
			if !ok || err != nil {
				return nil, false, err
			}
			part.page = page
		} else {
			return nil, false, nil
		}
		n.parts = append(n.parts, part)
	}
	return n, true, nil
}

// pagePlan is a nested connection's first page: totalCount, hasNextPage and
// hasPreviousPage, and edges with their nodes (no cursors).
type pagePlan struct {
	conn *ent.CompiledConnection
	typ  *ent.CompiledType // the node type
	node *nodePlan         // nil when edges are not selected
	// index is the page's place in its root page's pages, and in the
	// predicates of a request's read of it.
	index    int
	first    int
	order    []string // "column ASC|DESC", then id
	fields   []graphql.CollectedField
	pageInfo []graphql.CollectedField
	edge     []graphql.CollectedField
}

func (pl planner) nestedPage(conn *ent.CompiledConnection, f graphql.CollectedField) (*pagePlan, bool, error) {
	nodeType := ent.CompiledTypes[conn.Node]
	if nodeType == nil {
		return nil, false, nil
	}
	args := f.ArgumentMap(pl.oc.Variables)
	p := &pagePlan{conn: conn, typ: nodeType}
	for name, v := range args {
		switch name {
		case "first":
			// The page limits (graph/limits.go) checked the value already.
			// An empty nested page is gqlgen's: entgql answers its
			// hasNextPage false whatever the count.
			n, ok := argInt(v)
			if !ok || n <= 0 || n > 1000 {
				return nil, false, nil
			}
			p.first = int(n)
		case "orderBy":
			order, ok := nestedOrder(conn, v)
			if !ok {
				return nil, false, nil
			}
			p.order = order
		default: // after, before, last, where: gqlgen's
			if v != nil {
				return nil, false, nil
			}
		}
	}
	if _, ok := args["first"]; !ok {
		return nil, false, nil // the page defaults always give one; without it entgql reads every row
	}
	if !orderedByID(p.order) {
		p.order = append(p.order, "id ASC")
	}
	p.fields = graphql.CollectFields(pl.oc, f.Selections, []string{nodeType.Name + "Connection"})
	for _, c := range p.fields {
		switch c.Name {
		case "__typename", "totalCount":
		case "pageInfo":
			p.pageInfo = graphql.CollectFields(pl.oc, c.Selections, []string{"PageInfo"})
			for _, i := range p.pageInfo {
				if i.Name != "hasNextPage" && i.Name != "hasPreviousPage" && i.Name != "__typename" {
					return nil, false, nil // cursors of nested pages are gqlgen's
				}
			}
		case "edges":
			var ok bool
			var err error
			if p.edge, p.node, ok, err = pl.edges(c.Selections, nodeType, false); !ok || err != nil {
				return nil, false, err
			}
		default:
			return nil, false, nil
		}
	}
	p.index = len(*pl.pages)
	*pl.pages = append(*pl.pages, p)
	return p, true, nil
}

// predicates are, for each of the root page's nested pages, what its node
// query's interceptors add to a read of it in ctx (a tenant's
// confinement): ent's own read of the page would carry them. ok is false
// when an interceptor does more than add predicates, and the page is
// gqlgen's.
func (p *rootPage) predicates(ctx context.Context, client *ent.Client) ([][]func(*entsql.Selector), bool, error) {
	if len(p.pages) == 0 {
		return nil, true, nil
	}
	preds := make([][]func(*entsql.Selector), len(p.pages))
	for i, page := range p.pages {
		ps, ok, err := page.conn.Predicates(ctx, client)
		if !ok || err != nil {
			return nil, false, err
		}
		preds[i] = ps
	}
	return preds, true, nil
}

// argInt is an integer argument as gqlgen's ArgumentMap gives it: a
// literal's int64, a variable's json.Number (or a number a caller decoded).
func argInt(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case float64:
		return int64(n), true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}

// selects reports whether fields hold the field name.
func selects(fields []graphql.CollectedField, name string) bool {
	for _, f := range fields {
		if f.Name == name {
			return true
		}
	}
	return false
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
func nestedOrder(conn *ent.CompiledConnection, v any) ([]string, bool) {
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
		col, ok := conn.OrderColumn(field)
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
