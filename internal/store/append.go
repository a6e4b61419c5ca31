package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"sessiongraph/ent"
)

// insertEvents is the statement that appends a commit's events, each with
// the number its session gave it; its seven arguments start at $offset+1.
// It takes no lock of its own: each event's session is locked already (its
// row, or for the system session an advisory lock). An event's xid is the
// transaction's, raised to the session's previous event's xid, so that it
// never decreases within a session: a feed across sessions that reads below
// the snapshot horizon in xid order then also sees each session's events in
// their order, even when this transaction took its id before it waited for
// the session's lock (docs/events.md).
func insertEvents(offset int) string {
	p := func(i int) string { return fmt.Sprintf("$%d", offset+i) }
	return `INSERT INTO events (id, session_id, sequence, xid, tenant, kind, payload, created_at)
		SELECT r.id, r.session_id, r.sequence,
			GREATEST(pg_current_xact_id()::text::bigint, (
				SELECT p.xid FROM events p WHERE p.session_id = r.session_id AND p.sequence < r.sequence
				ORDER BY p.sequence DESC LIMIT 1)),
			r.tenant, r.kind, r.payload, ` + p(7) + `
		FROM unnest(` + p(1) + `::uuid[], ` + p(2) + `::uuid[], ` + p(3) + `::bigint[], ` + p(4) + `::text[], ` +
		p(5) + `::text[], ` + p(6) + `::jsonb[]) AS r(id, session_id, sequence, tenant, kind, payload)`
}

// eventArgs are insertEvents' arguments for events.
func eventArgs(events []sessionEvent, now time.Time) ([]any, error) {
	ids := make([]uuid.UUID, len(events))
	sessions := make([]uuid.UUID, len(events))
	sequences := make([]int64, len(events))
	tenants := make([]string, len(events))
	kinds := make([]string, len(events))
	payloads := make([]string, len(events))
	for i, ev := range events {
		if ev.Kind == "" {
			return nil, errors.New("store: a change must name its event")
		}
		p, err := json.Marshal(ev.Payload)
		if err != nil {
			return nil, fmt.Errorf("event payload: %w", err)
		}
		ids[i], sessions[i], tenants[i] = uuid.Must(uuid.NewV7()), ev.session.ID, ev.session.Tenant
		sequences[i], kinds[i], payloads[i] = ev.sequence, ev.Kind, string(p)
	}
	// Go slices, which pgx (the pool's driver) sends as binary arrays: a
	// lib/pq array would be sent as text, which pgx parses to re-encode.
	return []any{ids, sessions, sequences, tenants, kinds, payloads, now}, nil
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
	if len(pending) == 0 {
		return nil
	}
	args, err := eventArgs(pending, now)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, insertEvents(0), args...); err != nil {
		return fmt.Errorf("append events: %w", err)
	}
	return nil
}

// eventsBefore is a statement prefix that appends events in the statement
// it prefixes (a data-modifying WITH), so that a write's session update and
// its event cost one round trip. ent numbers its arguments after the
// statement's own (SetTotal).
type eventsBefore struct {
	args  []any
	total int
}

// SetDialect is ent's; the prefix is PostgreSQL's only.
func (p *eventsBefore) SetDialect(string) {}

// SetTotal tells the prefix how many arguments come before its own.
func (p *eventsBefore) SetTotal(total int) { p.total = total }

// Query returns the prefix and its arguments.
func (p *eventsBefore) Query() (string, []any) {
	return "WITH appended AS (" + insertEvents(p.total) + " RETURNING 1)", p.args
}
