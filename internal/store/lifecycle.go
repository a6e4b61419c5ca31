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
		return events, tx.Session.Update().Where(session.IDIn(ids...)).
			SetStatus(session.StatusExpired).SetExpiredAt(now).Exec(ctx)
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
// kind for each.
func lockSessions(ctx context.Context, tx *ent.Tx, kind, reason string, where []predicate.Session) ([]uuid.UUID, []sessionEvent, error) {
	rows, err := tx.Session.Query().Where(where...).
		Select(session.FieldID, session.FieldTenant).ForUpdate().All(ctx)
	if err != nil {
		return nil, nil, err
	}
	ids := make([]uuid.UUID, len(rows))
	events := make([]sessionEvent, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
		events[i] = sessionEvent{r, Event{Kind: kind, Payload: map[string]any{"reason": reason}}}
	}
	return ids, events, nil
}

// appendEvents writes a commit's events with the next global sequences and
// rings the doorbell, in one statement at the end of the transaction, so
// the order lock is held only for the commit itself. The lock is taken in a
// materialized CTE that the INSERT reads from, so nextval runs only once the
// lock is held, and sequences commit in order.
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
	tenants := make([]string, len(events))
	kinds := make([]string, len(events))
	payloads := make([]string, len(events))
	for i, ev := range events {
		p, err := json.Marshal(ev.Payload)
		if err != nil {
			return fmt.Errorf("event payload: %w", err)
		}
		ids[i], sessions[i], tenants[i] = uuid.Must(uuid.NewV7()).String(), ev.session.ID.String(), ev.session.Tenant
		kinds[i], payloads[i] = ev.Kind, string(p)
	}
	// The sequence given here is a negative placeholder: the
	// events_sequence_at_commit trigger (migrations) numbers each event under
	// the event order lock as the transaction commits. The doorbell rings at commit too; its payload
	// is empty, so PostgreSQL folds a transaction's doorbells into one.
	_, err := tx.ExecContext(ctx, `
		WITH appended AS (
			INSERT INTO events (id, sequence, session_id, tenant, kind, payload, created_at)
			SELECT r.id, -nextval('events_placeholder_seq'), r.session_id, r.tenant, r.kind, r.payload, $6
			FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::jsonb[]) AS r(id, session_id, tenant, kind, payload)
			RETURNING 1
		)
		SELECT pg_notify($7, '') FROM appended LIMIT 1`,
		pq.Array(ids), pq.Array(sessions), pq.Array(tenants), pq.Array(kinds), pq.Array(payloads), now, NotifyChannel)
	if err != nil {
		return fmt.Errorf("append events: %w", err)
	}
	return nil
}
