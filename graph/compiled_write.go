package graph

// Writing a compiled page: the JSON of each node from the values
// PostgreSQL returned (compiled_sql.go), appended to one buffer, and the
// connection in Go around it.

import (
	"errors"
	"io"
	"strconv"
	"strings"

	"entgo.io/contrib/entgql"
	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"

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
	ends := make([]int, len(texts))
	for j, t := range texts {
		var err error
		if vals, _, err = arrayElems(t, vals[:0]); err != nil {
			return nil, err
		}
		if buf, err = p.node.appendJSON(buf, vals, &sc); err != nil {
			return nil, err
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
		return p.appendEdges(b, vals[i-1].text(), sc)
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

// scratch keeps the slices of values that nested pages read their rows
// into, for the next page of the request: a stack, one in use per depth.
type scratch struct{ free [][]pgValue }

// take is a slice of values to read rows into.
func (sc *scratch) take() []pgValue {
	if n := len(sc.free); n > 0 {
		v := sc.free[n-1]
		sc.free = sc.free[:n-1]
		return v[:0]
	}
	return nil
}

// give keeps a slice that take gave, grown or not, for the next take.
func (sc *scratch) give(v []pgValue) { sc.free = append(sc.free, v) }

// pgValue is a value PostgreSQL returned as text. An array's element
// that was quoted keeps its escapes (escaped): the writer drops them as it
// copies, so that reading an array allocates nothing.
type pgValue struct {
	s       string
	valid   bool
	escaped bool
}

// text is the value without escapes.
func (v pgValue) text() string {
	if v.escaped {
		return unescapeElem(v.s)
	}
	return v.s
}

// appendValue appends a value as gqlgen's marshaller of its field's type
// writes it: null for NULL.
func appendValue(b []byte, v pgValue, kind ent.CompiledKind) []byte {
	switch {
	case !v.valid:
		return append(b, "null"...)
	case kind == ent.CompiledString:
		return appendQuoted(b, v.s, v.escaped)
	case kind == ent.CompiledTime:
		// to_json's ISO text, quoted (as an array's element, its quotes
		// escaped), which holds no other quote or backslash: without the
		// quotes, and with the Z of RFC 3339 in UTC.
		q := `"`
		if v.escaped {
			q = `\"`
		}
		b = append(b, '"')
		b = append(b, strings.TrimSuffix(strings.TrimPrefix(v.s, q), q)...)
		return append(b, 'Z', '"')
	case kind == ent.CompiledStringMap:
		return appendGqlgenEscapes(b, v.text())
	}
	return append(b, v.s...) // a number's or a Boolean's text: never escaped
}

const upperHex = "0123456789ABCDEF"

// appendQuoted appends s as a JSON string, escaped as gqlgen's
// MarshalString escapes it: \t, \r, \n, \\ and \" by name, other
// control characters as \u00XX in upper case, everything else as is. Each
// byte that needs escaping is ASCII, so a walk over bytes is one over runes.
// When arrayEscaped, s is an array's quoted element, whose backslashes
// each escape the byte after them (a quote or a backslash).
func appendQuoted(b []byte, s string, arrayEscaped bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '\\' && c != '"' {
			continue
		}
		b = append(b, s[start:i]...)
		if arrayEscaped && c == '\\' && i+1 < len(s) {
			i++
			c = s[i]
		}
		switch c {
		case '\t':
			b = append(b, '\\', 't')
		case '\r':
			b = append(b, '\\', 'r')
		case '\n':
			b = append(b, '\\', 'n')
		case '\\', '"':
			b = append(b, '\\', c)
		default:
			b = append(b, '\\', 'u', '0', '0', upperHex[c>>4], upperHex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendGqlgenEscapes appends JSON that PostgreSQL wrote, spelling its
// string escapes as gqlgen does: PostgreSQL writes a backspace and a form
// feed as \b and \f and other control characters in lower-case hex, gqlgen
// as \u0008, \u000C and upper case. Every backslash in PostgreSQL's JSON
// starts an escape, so a scan from escape to escape is exact.
func appendGqlgenEscapes(b []byte, s string) []byte {
	for {
		i := strings.IndexByte(s, '\\')
		if i < 0 || i+1 >= len(s) {
			return append(b, s...)
		}
		b = append(b, s[:i]...)
		switch s[i+1] {
		case 'b':
			b = append(b, `\u0008`...)
			s = s[i+2:]
		case 'f':
			b = append(b, `\u000C`...)
			s = s[i+2:]
		case 'u':
			end := min(i+6, len(s))
			b = append(b, `\u`...)
			b = append(b, strings.ToUpper(s[i+2:end])...)
			s = s[end:]
		default:
			b = append(b, s[i:i+2]...)
			s = s[i+2:]
		}
	}
}

var errCompiledValues = errors.New("compiled read: values not as planned")

// arrayElems reads the one-dimensional text array at the start of s, in
// PostgreSQL's text form (array_out's: elements separated by commas
// between braces; NULL unquoted; an element that is empty, NULL in any
// case, or holds a brace, comma, quote, backslash or space is quoted,
// with its quotes and backslashes escaped by a backslash), appending its
// elements to dst, slices of s. It returns them and what follows the
// closing brace.
func arrayElems(s string, dst []pgValue) ([]pgValue, string, error) {
	if len(s) < 2 || s[0] != '{' {
		return dst, s, errCompiledValues
	}
	s = s[1:]
	if s[0] == '}' {
		return dst, s[1:], nil
	}
	for {
		var v pgValue
		if s[0] == '"' {
			escaped := false
			i := 1
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					escaped = true
					i++
				}
			}
			if i >= len(s) {
				return dst, s, errCompiledValues
			}
			v = pgValue{s: s[1:i], valid: true, escaped: escaped}
			s = s[i+1:]
		} else {
			i := strings.IndexAny(s, ",}")
			if i < 0 {
				return dst, s, errCompiledValues
			}
			if tok := s[:i]; tok != "NULL" {
				v = pgValue{s: tok, valid: true}
			}
			s = s[i:]
		}
		dst = append(dst, v)
		if len(s) == 0 {
			return dst, s, errCompiledValues
		}
		if s[0] == '}' {
			return dst, s[1:], nil
		}
		if s[0] != ',' {
			return dst, s, errCompiledValues
		}
		s = s[1:]
	}
}

// unescapeElem drops the backslash of each escape in a quoted element.
func unescapeElem(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
