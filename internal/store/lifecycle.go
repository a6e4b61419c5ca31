package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/lib/pq"

	"sessiongraph/ent"
	"sessiongraph/ent/event"
	"sessiongraph/ent/predicate"
	"sessiongraph/ent/session"
)

// Event kinds of the session lifecycle.
const (
	KindSessionDeleted = "session.deleted"
)

// ExpireWhere marks every live session matching where as expired, with one
// event each, in a fixed number of statements whatever their number: lock
// the matching rows, update them, append their events. It returns the
// sessions it expired.
func (s *Store) ExpireWhere(ctx context.Context, reason string, where ...predicate.Session) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	err := s.inTx(ctx, func(tx *ent.Tx, now time.Time) ([]sessionEvent, error) {
		var events []sessionEvent
		var err error
		ids, events, err = lockSessions(ctx, tx, KindSessionExpired, reason, append(where, session.StatusEQ(session.StatusActive)))
		if err != nil || len(ids) == 0 {
			return nil, err
		}
		// Each session gets exactly one event, numbered by lockSessions.
		return events, tx.Session.Update().Where(session.IDIn(ids...)).
			SetStatus(session.StatusExpired).SetExpiredAt(now).AddEventSequence(1).Exec(ctx)
	})
	return ids, err
}

// DeleteWhere deletes every session matching where with all its rows (its
// turns, refs and artifacts cascade; its events are deleted here) and
// records one session.deleted event each, which outlive the session.
func (s *Store) DeleteWhere(ctx context.Context, reason string, where ...predicate.Session) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	err := s.inTx(ctx, func(tx *ent.Tx, now time.Time) ([]sessionEvent, error) {
		var events []sessionEvent
		var err error
		ids, events, err = lockSessions(ctx, tx, KindSessionDeleted, reason, where)
		if err != nil || len(ids) == 0 {
			return nil, err
		}
		if _, err := tx.Event.Delete().Where(event.SessionIDIn(ids...)).Exec(ctx); err != nil {
			return nil, err
		}
		_, err = tx.Session.Delete().Where(session.IDIn(ids...)).Exec(ctx)
		return events, err
	})
	return ids, err
}

// lockSessions locks the sessions matching where and prepares one event of
// kind for each, numbered next in its session.
func lockSessions(ctx context.Context, tx *ent.Tx, kind, reason string, where []predicate.Session) ([]uuid.UUID, []sessionEvent, error) {
	rows, err := tx.Session.Query().Where(where...).
		Select(session.FieldID, session.FieldTenant, session.FieldEventSequence).ForUpdate().All(ctx)
	if err != nil {
		return nil, nil, err
	}
	ids := make([]uuid.UUID, len(rows))
	events := make([]sessionEvent, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
		events[i] = nextEvent(r, Event{Kind: kind, Payload: map[string]any{"reason": reason}})
	}
	return ids, events, nil
}

// appendEvents writes a commit's events, each with the number its session
// gave it, in one statement at the end of the transaction. It takes no lock
// of its own: each event's session is locked already (its row, or for the
// system feed an advisory lock). Its xid is the transaction's, raised to the
// session's previous event's xid, so that it never decreases within a
// session: a feed across sessions that reads below the snapshot horizon in
// xid order then also sees each session's events in their order, even when
// this transaction took its xid before it waited for the session's lock
// (docs/events.md). The doorbell rings after the commit (Store.OnCommit).
func appendEvents(ctx context.Context, tx *ent.Tx, events []sessionEvent, now time.Time) error {
	for _, ev := range events {
		if ev.Kind == "" {
			return errors.New("store: a change must name its event")
		}
	}
	if len(events) == 0 {
		return nil
	}
	ids := make([]string, len(events))
	sessions := make([]string, len(events))
	sequences := make([]int64, len(events))
	tenants := make([]string, len(events))
	kinds := make([]string, len(events))
	payloads := make([]string, len(events))
	for i, ev := range events {
		p, err := json.Marshal(ev.Payload)
		if err != nil {
			return fmt.Errorf("event payload: %w", err)
		}
		ids[i], sessions[i], tenants[i] = uuid.Must(uuid.NewV7()).String(), ev.session.ID.String(), ev.session.Tenant
		sequences[i], kinds[i], payloads[i] = ev.sequence, ev.Kind, string(p)
	}
	_, err := tx.ExecContext(ctx, `
		INSERT INTO events (id, session_id, sequence, xid, tenant, kind, payload, created_at)
		SELECT r.id, r.session_id, r.sequence,
			GREATEST(pg_current_xact_id()::text::bigint, (
				SELECT p.xid FROM events p WHERE p.session_id = r.session_id AND p.sequence < r.sequence
				ORDER BY p.sequence DESC LIMIT 1)),
			r.tenant, r.kind, r.payload, $7
		FROM unnest($1::uuid[], $2::uuid[], $3::bigint[], $4::text[], $5::text[], $6::jsonb[])
			AS r(id, session_id, sequence, tenant, kind, payload)`,
		pq.Array(ids), pq.Array(sessions), pq.Array(sequences), pq.Array(tenants), pq.Array(kinds), pq.Array(payloads), now)
	if err != nil {
		return fmt.Errorf("append events: %w", err)
	}
	return nil
}
