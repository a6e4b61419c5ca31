package compiled

// Writing a compiled page: the JSON of each node from the values
// PostgreSQL returned (sql.go), appended to one buffer, and the
// connection in Go around it.

import (
	"io"
	"slices"
	"strconv"
	"strings"

	"entgo.io/contrib/entgql"
	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"sessiongraph/ent"
)

// write writes the root connection around the nodes' JSON, nodes[j]
// being the j-th edge's node's.
func (p *rootPage) write(w io.Writer, conn *ent.SessionConnection, nodes [][]byte) {
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
				var node []byte // no node selected: no text read
				if j < len(nodes) {
					node = nodes[j]
				}
				p.writeEdge(w, e, node)
			}
			io.WriteString(w, "]")
		}
	})
}

// nodesJSON is the JSON of each node whose values CompiledPage returned
// as texts (writeNodeArray's one-dimensional arrays), in one buffer.
func (p *rootPage) nodesJSON(texts []string) ([][]byte, error) {
	var buf []byte
	var vals []pgValue
	var sc scratch
	// Room for every nested page's text without escapes, at most the
	// texts' own length: sc.texts then grows no more.
	size := 0
	for _, t := range texts {
		size += len(t)
	}
	sc.texts.Grow(size)
	ends := make([]int, len(texts))
	for j, t := range texts {
		var err error
		if vals, _, err = arrayElems(t, vals[:0]); err != nil {
			return nil, err
		}
		if buf, err = p.node.appendJSON(buf, vals, &sc); err != nil {
			return nil, err
		}
		if j == 0 {
			// Room for the page, by its first node, at once.
			buf = slices.Grow(buf, len(buf)*(len(texts)-1)+len(buf)/2)
		}
		ends[j] = len(buf)
	}
	nodes := make([][]byte, len(texts))
	start := 0
	for j, end := range ends {
		nodes[j] = buf[start:end:end]
		start = end
	}
	return nodes, nil
}

// edgeRows reads the rows of a cursorless root page (the statement of
// ent's CompiledEdges) and appends each of the first rows to edges as its
// edge's JSON; it counts every row.
type edgeRows struct {
	page  *rootPage
	first int
	edges []byte
	rows  int // read so far
}

// read reads the page's rows. Every column is text (sql.go casts each
// value), whose binary form is its text, so pgx's raw values are the
// values PostgreSQL wrote, NULL a nil one. pgx reuses their bytes for the
// next row, so the page's are copied, one after another, into one string
// that the edges' values are slices of.
func (e *edgeRows) read(rows pgx.Rows) error {
	var text []byte
	var lens []int // each value's length, -1 for NULL
	cols := 0
	for rows.Next() {
		if e.rows++; e.rows > e.first {
			continue // the row past the page, counted for hasNextPage
		}
		raw := rows.RawValues()
		if cols == 0 {
			// Room for the page, by its first row, at once.
			cols = len(raw)
			size := 0
			for _, v := range raw {
				size += len(v)
			}
			text = make([]byte, 0, room(size, e.first))
			lens = make([]int, 0, cols*min(e.first, maxRoomRows))
		}
		for _, v := range raw {
			text = append(text, v...)
			if v == nil {
				lens = append(lens, -1)
			} else {
				lens = append(lens, len(v))
			}
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if cols == 0 {
		return nil
	}
	page, at := string(text), 0
	vals := make([]pgValue, cols)
	var sc scratch
	for r := 0; r < len(lens)/cols; r++ {
		for i, n := range lens[r*cols : (r+1)*cols] {
			vals[i] = pgValue{}
			if n >= 0 {
				vals[i] = pgValue{s: page[at : at+n], valid: true}
				at += n
			}
		}
		if r > 0 {
			e.edges = append(e.edges, ',')
		}
		var err error
		if e.edges, err = e.page.appendEdge(e.edges, vals, &sc); err != nil {
			return err
		}
		if r == 0 {
			// Room for the page, by its first edge, at once.
			e.edges = slices.Grow(e.edges, len(e.edges)*(len(lens)/cols-1)+len(e.edges)/2)
		}
	}
	return nil
}

// appendEdge appends a cursorless root page's edge, its node's values
// being vals (writeEdgeColumns').
func (p *rootPage) appendEdge(b []byte, vals []pgValue, sc *scratch) ([]byte, error) {
	return appendFields(b, p.edge, func(b []byte, f graphql.CollectedField) ([]byte, error) {
		if f.Name == "node" {
			return p.node.appendJSON(b, vals, sc)
		}
		return append(b, `"SessionEdge"`...), nil // __typename
	})
}

// writeEdges writes a cursorless root connection whose edges' JSON,
// the elements of their array, is edges.
func (p *rootPage) writeEdges(w io.Writer, conn *ent.SessionConnection, edges []byte) {
	writeFields(w, p.fields, func(f graphql.CollectedField) {
		switch f.Name {
		case "__typename":
			io.WriteString(w, `"SessionConnection"`)
		case "pageInfo":
			writePageInfo(w, p.pageInfo, &conn.PageInfo, p.cursor)
		case "edges":
			io.WriteString(w, "[")
			w.Write(edges)
			io.WriteString(w, "]")
		}
	})
}

// writeFields writes a JSON object of the fields, value writing each one's.
func writeFields(w io.Writer, fields []graphql.CollectedField, value func(graphql.CollectedField)) {
	for i, f := range fields {
		// A response key is a GraphQL name, which JSON need not escape.
		if i == 0 {
			io.WriteString(w, `{"`)
		} else {
			io.WriteString(w, `,"`)
		}
		io.WriteString(w, f.Alias)
		io.WriteString(w, `":`)
		value(f)
	}
	if len(fields) == 0 {
		io.WriteString(w, "{")
	}
	io.WriteString(w, "}")
}

// writeEdge writes an edge whose node's JSON is node.
func (p *rootPage) writeEdge(w io.Writer, e *ent.SessionEdge, node []byte) {
	writeFields(w, p.edge, func(f graphql.CollectedField) {
		switch f.Name {
		case "__typename":
			io.WriteString(w, `"SessionEdge"`)
		case "cursor":
			p.cursor(w, &e.Cursor)
		case "node":
			w.Write(node)
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

// appendFields appends a JSON object of the fields, value appending each
// one's.
func appendFields(b []byte, fields []graphql.CollectedField, value func([]byte, graphql.CollectedField) ([]byte, error)) ([]byte, error) {
	b = append(b, '{')
	for i, f := range fields {
		if i > 0 {
			b = append(b, ',')
		}
		// A response key is a GraphQL name, which JSON need not escape.
		b = append(b, '"')
		b = append(b, f.Alias...)
		b = append(b, '"', ':')
		var err error
		if b, err = value(b, f); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}

// appendJSON appends the node's JSON, its values being vals (as
// writeValues wrote them).
func (n *nodePlan) appendJSON(b []byte, vals []pgValue, sc *scratch) ([]byte, error) {
	b = append(b, '{')
	i := 0
	for k, part := range n.parts {
		if k > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, part.key...)
		b = append(b, '"', ':')
		if part.typename {
			b = appendQuoted(b, n.typ.Name, false)
			continue
		}
		if i >= len(vals) {
			return b, errCompiledValues
		}
		var err error
		if part.page != nil {
			if b, i, err = part.page.appendJSON(b, vals, i, sc); err != nil {
				return b, err
			}
			continue
		}
		b = appendValue(b, vals[i], part.col.Kind)
		i++
	}
	return append(b, '}'), nil
}

// appendJSON appends a nested page's JSON from its values, vals[i:] (as
// writeValues wrote them), and returns the index of the values after
// them.
func (p *pagePlan) appendJSON(b []byte, vals []pgValue, i int, sc *scratch) ([]byte, int, error) {
	var hasNext string
	b, err := appendFields(b, p.fields, func(b []byte, f graphql.CollectedField) ([]byte, error) {
		if f.Name == "__typename" {
			return appendQuoted(b, p.typ.Name+"Connection", false), nil
		}
		if i >= len(vals) {
			return b, errCompiledValues
		}
		switch f.Name {
		case "totalCount":
			i++
			return append(b, vals[i-1].s...), nil
		case "pageInfo":
			if selects(p.pageInfo, "hasNextPage") {
				hasNext = vals[i].s
				i++
			}
			return appendFields(b, p.pageInfo, func(b []byte, f graphql.CollectedField) ([]byte, error) {
				switch f.Name {
				case "hasNextPage":
					return append(b, hasNext...), nil
				case "hasPreviousPage":
					return append(b, "false"...), nil // a first page without a cursor
				}
				return append(b, `"PageInfo"`...), nil // __typename
			})
		}
		i++ // edges
		return p.appendEdges(b, sc.text(vals[i-1]), sc)
	})
	return b, i, err
}

// appendEdges appends the JSON array of a nested page's edges, whose
// nodes' values are the rows of rows, a two-dimensional text array's text.
func (p *pagePlan) appendEdges(b []byte, rows string, sc *scratch) ([]byte, error) {
	if !strings.HasPrefix(rows, "{") {
		return b, errCompiledValues
	}
	rows = rows[1:]
	b = append(b, '[')
	// This page's rows are read one after another into one slice, which a
	// page nested in them does not use: each takes another of sc's.
	vals := sc.take()
	var err error
	for first := true; err == nil && len(rows) > 0 && rows[0] != '}'; first = false {
		if vals, rows, err = arrayElems(rows, vals[:0]); err != nil {
			break
		}
		if !first {
			b = append(b, ',')
		}
		b, err = appendFields(b, p.edge, func(b []byte, f graphql.CollectedField) ([]byte, error) {
			if f.Name == "node" {
				return p.node.appendJSON(b, vals, sc)
			}
			return appendQuoted(b, p.typ.Name+"Edge", false), nil // __typename
		})
		if len(rows) > 0 && rows[0] == ',' {
			rows = rows[1:]
		}
	}
	sc.give(vals)
	return append(b, ']'), err
}
