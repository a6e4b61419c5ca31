package store

import (
	"context"
	"time"

	"github.com/google/uuid"

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
