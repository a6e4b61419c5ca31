package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"sessiongraph/ent"
)

// eventXid is the number an event is ordered by in the feed across
// sessions: the larger of the transaction's id and the first id not yet
// given out when the statement began. It is at least the transaction's own
// id, so once the snapshot horizon has passed it the transaction has ended
// and the event is final. And it never decreases within a session: the
// statement that appends an event runs after its session's lock was taken,
// so after the commit of the session's previous event, whose number (its
// transaction's id, or the first id not yet given out before that commit)
// is below the first id not yet given out now. No read of the previous
// event is needed, which keeps the insert a plain one on Citus, where
// both functions are evaluated on the coordinator (docs/events.md).
const eventXid = `GREATEST(pg_current_xact_id()::text::bigint, pg_snapshot_xmax(pg_current_snapshot())::text::bigint)`

// eventColumns are the columns an append writes, in its arguments' order.
const eventColumns = `id, session_id, sequence, xid, tenant, kind, payload, turn, created_at`

// insertEvent is the statement that appends rows events of one session;
// each row's eight arguments follow the one before's, from $offset+1. A
// VALUES row names its session by a parameter, so on Citus it is a router
// insert on the session's shard.
func insertEvent(offset, rows int) string {
	values := make([]string, rows)
	for r := range values {
		p := func(i int) string { return fmt.Sprintf("$%d", offset+8*r+i) }
		values[r] = `(` + p(1) + `, ` + p(2) + `, ` + p(3) + `, ` + eventXid +
			`, ` + p(4) + `, ` + p(5) + `, ` + p(6) + `::jsonb, ` + p(7) + `::bigint, ` + p(8) + `)`
	}
	return `INSERT INTO events (` + eventColumns + `) VALUES ` + strings.Join(values, ", ")
}

// insertEvents is the statement that appends a commit's events, each with
// the number its session gave it; its eight arguments are arrays but the
// last. It takes no lock of its own: each event's session is locked already
// (its row, or for the system session an advisory lock). On Citus the rows
// of unnest are made on the coordinator and sent to their shards.
func insertEvents() string {
	return `INSERT INTO events (` + eventColumns + `)
		SELECT r.id, r.session_id, r.sequence, ` + eventXid + `, r.tenant, r.kind, r.payload, r.turn, $8
		FROM unnest($1::uuid[], $2::uuid[], $3::bigint[], $4::text[], $5::text[], $6::jsonb[], $7::bigint[])
			AS r(id, session_id, sequence, tenant, kind, payload, turn)`
}

// eventArgs are insertEvents' arguments for events.
func eventArgs(events []sessionEvent, now time.Time) ([]any, error) {
	ids := make([]uuid.UUID, len(events))
	sessions := make([]uuid.UUID, len(events))
	sequences := make([]int64, len(events))
	tenants := make([]string, len(events))
	kinds := make([]string, len(events))
	payloads := make([]string, len(events))
	turns := make([]*int64, len(events))
	for i, ev := range events {
		if ev.Kind == "" {
			return nil, errors.New("store: a change must name its event")
		}
		p, err := json.Marshal(ev.Payload)
		if err != nil {
			return nil, fmt.Errorf("event payload: %w", err)
		}
		ids[i], sessions[i], tenants[i] = uuid.Must(uuid.NewV7()), ev.session.ID, ev.session.Tenant
		sequences[i], kinds[i], payloads[i], turns[i] = ev.sequence, ev.Kind, string(p), eventTurn(ev)
	}
	// Go slices, which pgx (the pool's driver) sends as binary arrays: a
	// lib/pq array would be sent as text, which pgx parses to re-encode.
	return []any{ids, sessions, sequences, tenants, kinds, payloads, turns, now}, nil
}

// eventTurn is the turn an event belongs to (events.turn): the one its
// payload names (a turn's own events, items, steps, builds and model calls,
// which may name an earlier turn than the current one), else the session's
// current turn once the write is done; none (null) before the first turn.
func eventTurn(ev sessionEvent) *int64 {
	var n int64
	switch v := ev.Payload["turn"].(type) {
	case int:
		n = int64(v)
	case int64:
		n = v
	default:
		n = int64(ev.current)
	}
	if n <= 0 {
		return nil
	}
	return &n
}

// eventArg is insertEvent's arguments for one event.
func eventArg(ev sessionEvent, now time.Time) ([]any, error) {
	args, err := eventArgs([]sessionEvent{ev}, now)
	if err != nil {
		return nil, err
	}
	for i := range 7 {
		switch v := args[i].(type) {
		case []uuid.UUID:
			args[i] = v[0]
		case []int64:
			args[i] = v[0]
		case []string:
			args[i] = v[0]
		case []*int64:
			args[i] = v[0]
		}
	}
	return args, nil
}

// appendEvents writes the events of a commit that its session update did
// not carry, in one statement at the end of the transaction.
func appendEvents(ctx context.Context, tx *ent.Tx, events []sessionEvent, now time.Time) error {
	var pending []sessionEvent
	for _, ev := range events {
		if !ev.appended {
			pending = append(pending, ev)
		}
	}
	var query string
	var args []any
	var err error
	switch len(pending) {
	case 0:
		return nil
	case 1:
		query = insertEvent(0, 1)
		args, err = eventArg(pending[0], now)
	default:
		query = insertEvents()
		args, err = eventArgs(pending, now)
	}
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, query, args...); err != nil {
		return fmt.Errorf("append events: %w", err)
	}
	return nil
}

// eventsBefore is a statement prefix that appends a write's events (all of
// one session) in the statement it prefixes (a data-modifying WITH), so
// that a write's session update and its events cost one round trip: on
// Citus, a router statement on the session's shard. ent numbers its
// arguments after the statement's own (SetTotal).
type eventsBefore struct {
	args  []any
	rows  int
	total int
}

// newEventsBefore is the prefix that appends events.
func newEventsBefore(events []sessionEvent, now time.Time) (*eventsBefore, error) {
	p := &eventsBefore{rows: len(events)}
	for _, ev := range events {
		args, err := eventArg(ev, now)
		if err != nil {
			return nil, err
		}
		p.args = append(p.args, args...)
	}
	return p, nil
}

// SetDialect is ent's; the prefix is PostgreSQL's only.
func (p *eventsBefore) SetDialect(string) {}

// SetTotal tells the prefix how many arguments come before its own.
func (p *eventsBefore) SetTotal(total int) { p.total = total }

// Query returns the prefix and its arguments.
func (p *eventsBefore) Query() (string, []any) {
	return "WITH appended AS (" + insertEvent(p.total, p.rows) + " RETURNING 1)", p.args
}
