package graph

// Writing a compiled root page: the connection in Go around the JSON
// PostgreSQL wrote for each node.

import (
	"io"
	"strconv"
	"strings"

	"entgo.io/contrib/entgql"
	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"

	"sessiongraph/ent"
)

// write writes the root connection around the nodes' JSON.
func (p *rootPage) write(w io.Writer, conn *ent.SessionConnection, texts []string) {
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
				node := "" // no node selected: no text read
				if j < len(texts) {
					node = texts[j]
				}
				p.writeEdge(w, e, node)
			}
			io.WriteString(w, "]")
		}
	})
}

// writeEdges writes a cursorless root connection whose edges' JSON
// PostgreSQL wrote as edges, the elements of their array.
func (p *rootPage) writeEdges(w io.Writer, conn *ent.SessionConnection, edges string) {
	writeFields(w, p.fields, func(f graphql.CollectedField) {
		switch f.Name {
		case "__typename":
			io.WriteString(w, `"SessionConnection"`)
		case "pageInfo":
			writePageInfo(w, p.pageInfo, &conn.PageInfo, p.cursor)
		case "edges":
			io.WriteString(w, "[")
			writeGqlgenEscapes(w, edges)
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
