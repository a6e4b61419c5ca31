package events

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
)

// horizonSQL is the snapshot horizon: every transaction whose id is below
// it has ended, so every event whose xid is below it is final.
const horizonSQL = `pg_snapshot_xmin(pg_current_snapshot())::text::bigint`

// eventColumns are what every read selects, in Event's order.
const eventColumns = `id, sequence, xid, session_id, tenant, kind, turn, payload, created_at`

// The reads run on the server's pool, whose driver is pgx: it sends Go
// slices as arrays.

// readHorizon returns the snapshot horizon now.
func readHorizon(ctx context.Context, db *sql.DB) (int64, error) {
	var horizon int64
	err := db.QueryRowContext(ctx, `SELECT `+horizonSQL).Scan(&horizon)
	return horizon, err
}

// feedPage is one read of the feed of every session.
type feedPage struct {
	events []Event
	// horizon is the snapshot horizon the read stopped at.
	horizon int64
	// waiting is true when events have committed at or above the horizon:
	// they wait for an older transaction to end.
	waiting bool
}

// readFeed reads up to pageSize final events after a position (and, when
// upTo is given, not after it) that match the filter, in the feed's order,
// with the horizon it read below and whether events wait above it.
//
// It reads the horizon first, in a statement of its own, and the events
// below it in a second one: every event below the horizon was final when
// the horizon was read, so the second statement's snapshot sees it. On
// Citus the horizon is the coordinator's (where events are numbered), and
// the events' read is one query on every shard, each sorted and limited
// there and merged on the coordinator; one statement joining the two would
// let Citus evaluate the horizon on the workers.
func readFeed(ctx context.Context, db *sql.DB, after Position, upTo *Position, f Filter) (feedPage, error) {
	var page feedPage
	err := db.QueryRowContext(ctx, `SELECT h.horizon, COALESCE((SELECT MAX(xid) FROM events), 0) >= h.horizon
		FROM (SELECT `+horizonSQL+` AS horizon) AS h`).
		Scan(&page.horizon, &page.waiting)
	if err != nil {
		return feedPage{}, err
	}
	args := []any{after.Xid, after.SessionID, after.Sequence, page.horizon}
	where := `(xid, session_id, sequence) > ($1, $2, $3) AND xid < $4`
	if upTo != nil {
		args = append(args, upTo.Xid, upTo.SessionID, upTo.Sequence)
		where += ` AND (xid, session_id, sequence) <= ($5, $6, $7)`
	}
	where += f.sql(&args)
	q := fmt.Sprintf(`SELECT %s FROM events WHERE %s ORDER BY xid, session_id, sequence LIMIT %d`,
		eventColumns, where, pageSize)
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return feedPage{}, err
	}
	if page.events, err = scanEvents(rows); err != nil {
		return feedPage{}, err
	}
	return page, nil
}

// readSession reads up to pageSize events of one session after a sequence,
// in order. No horizon applies: a session's events commit in the order of
// their sequence (each under the session's lock), so every event before a
// visible one is visible.
func readSession(ctx context.Context, db *sql.DB, session uuid.UUID, after int64) ([]Event, error) {
	rows, err := db.QueryContext(ctx, fmt.Sprintf(
		`SELECT %s FROM events WHERE session_id = $1 AND sequence > $2 ORDER BY sequence LIMIT %d`, eventColumns, pageSize),
		session, after)
	if err != nil {
		return nil, err
	}
	return scanEvents(rows)
}

// readSessions reads the events of several sessions, each after its own
// sequence, up to sessionPage each, in order within each; full lists the
// sessions that have more. Each session is read by its own arm of a UNION
// ALL, by a parameter: on Citus each arm is a router query on its
// session's shard (a lateral join over the list would ask every shard, and
// Citus refuses it).
func readSessions(ctx context.Context, db *sql.DB, sessions []uuid.UUID, after []int64) (evs []Event, full []uuid.UUID, err error) {
	var q strings.Builder
	args := make([]any, 0, 2*len(sessions))
	q.WriteString(`SELECT * FROM (`)
	for i, id := range sessions {
		if i > 0 {
			q.WriteString(` UNION ALL `)
		}
		fmt.Fprintf(&q, `(SELECT %s FROM events WHERE session_id = $%d AND sequence > $%d ORDER BY sequence LIMIT %d)`,
			eventColumns, 2*i+1, 2*i+2, sessionPage)
		args = append(args, id, after[i])
	}
	q.WriteString(`) AS e ORDER BY session_id, sequence`)
	rows, err := db.QueryContext(ctx, q.String(), args...)
	if err != nil {
		return nil, nil, err
	}
	if evs, err = scanEvents(rows); err != nil {
		return nil, nil, err
	}
	count := map[uuid.UUID]int{}
	for _, ev := range evs {
		if count[ev.SessionID]++; count[ev.SessionID] == sessionPage {
			full = append(full, ev.SessionID)
		}
	}
	return evs, full, nil
}

// scanEvents reads rows of eventColumns and closes them.
func scanEvents(rows *sql.Rows) ([]Event, error) {
	defer rows.Close()
	var out []Event
	for rows.Next() {
		var ev Event
		var payload []byte
		var at time.Time
		var turn sql.NullInt64
		if err := rows.Scan(&ev.ID, &ev.Sequence, &ev.Xid, &ev.SessionID, &ev.Tenant, &ev.Kind, &turn, &payload, &at); err != nil {
			return nil, err
		}
		ev.CreatedAt = at
		if turn.Valid {
			n := int(turn.Int64)
			ev.Turn = &n
		}
		if err := json.Unmarshal(payload, &ev.Payload); err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	return out, rows.Err()
}

// newestSequence is the sequence of a session's newest event (0: none).
func newestSequence(ctx context.Context, db *sql.DB, session uuid.UUID) (int64, error) {
	var newest int64
	err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(sequence), 0) FROM events WHERE session_id = $1`, session).Scan(&newest)
	return newest, err
}

// sql adds the filter's tenant and kinds to a read of the feed.
func (f Filter) sql(args *[]any) string {
	var b strings.Builder
	if f.Tenant != nil {
		*args = append(*args, *f.Tenant)
		fmt.Fprintf(&b, " AND tenant = $%d", len(*args))
	}
	if f.Kinds != nil {
		kinds := make([]string, 0, len(f.Kinds))
		for k, ok := range f.Kinds {
			if ok {
				kinds = append(kinds, k)
			}
		}
		slices.Sort(kinds)
		*args = append(*args, kinds)
		fmt.Fprintf(&b, " AND kind = ANY($%d)", len(*args))
	}
	return b.String()
}
