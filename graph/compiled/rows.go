package compiled

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"sessiongraph/ent"
	"sessiongraph/ent/session"
)

// maxPageRows caps the room made for a page's rows before they are read:
// first or last asks at most so many, it does not say how many there are.
const maxPageRows = 1001

// pageRows reads the rows of a root page that ent's CompiledPage builds
// (a page whose cursors are asked, or counted): each row's id and order
// values scanned by pgx into the row's node (a pgtype.UUID for the id, the
// node's own fields for the order's columns, CompiledOrderTarget), and its
// node's text, the last column, copied raw into one string for the page.
// Through database/sql every value was a string or a box, and every row a
// node of its own. limit is how many rows the statement returns at most
// (0: unknown).
func pageRows(query Query, limit int) func(context.Context, string, []any) ([]*ent.Session, []string, error) {
	return func(ctx context.Context, sql string, args []any) ([]*ent.Session, []string, error) {
		var rows []ent.Session
		var text []byte
		var lens []int // each text's length, -1 for NULL
		err := query(ctx, sql, args, func(r pgx.Rows) error {
			var node ent.Session
			var id pgtype.UUID
			fields := r.FieldDescriptions()
			last := len(fields) - 1
			targets := make([]any, len(fields)) // the text's is nil: pgx skips it, it is read raw
			for i, f := range fields[:last] {
				if f.Name == session.FieldID {
					targets[i] = &id
				} else if targets[i] = node.CompiledOrderTarget(f.Name); targets[i] == nil {
					return fmt.Errorf("compiled page: column %q is neither the id nor an order column", f.Name)
				}
			}
			rows = make([]ent.Session, 0, min(limit, maxRoomRows))
			lens = make([]int, 0, min(limit, maxRoomRows))
			for r.Next() {
				if err := r.Scan(targets...); err != nil {
					return err
				}
				node.ID = id.Bytes
				rows = append(rows, node)
				v := r.RawValues()[last]
				if len(text) == 0 && cap(text) == 0 && limit > 0 {
					text = make([]byte, 0, room(len(v), limit)) // room for the page, by its first row
				}
				text = append(text, v...)
				if v == nil {
					lens = append(lens, -1)
				} else {
					lens = append(lens, len(v))
				}
			}
			return r.Err()
		})
		if err != nil {
			return nil, nil, err
		}
		nodes := make([]*ent.Session, len(rows))
		texts := make([]string, len(rows))
		page, at := string(text), 0
		for i := range rows {
			nodes[i] = &rows[i]
			if n := lens[i]; n >= 0 {
				texts[i] = page[at : at+n]
				at += n
			}
		}
		return nodes, texts, nil
	}
}

// maxRoom bounds what a page reserves before its rows are read. The room is
// guessed from the first row times the rows asked for, and a client may ask
// for thousands of rows of which few exist, or whose first is its largest:
// past the bound, append grows the buffer by the rows that come.
const maxRoom = 1 << 20

// maxRoomRows bounds the rows a page reserves room for, by the same reasoning.
const maxRoomRows = 1024

// room is the capacity to reserve for rows of about perRow each: perRow times
// rows and a half row more, at most maxRoom.
func room(perRow, rows int) int {
	if rows <= 0 || perRow <= 0 {
		return 0
	}
	if perRow > maxRoom/rows {
		return maxRoom
	}
	return min(perRow*rows+perRow/2, maxRoom)
}
