package store

import (
	"context"
	"time"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/ent/contextreceipt"
	"sessiongraph/ent/event"
	"sessiongraph/ent/predicate"
	"sessiongraph/ent/session"
	"sessiongraph/ent/sessionkey"
)

// ExpireWhere marks every live session matching where as expired, with one
// event each, in a fixed number of statements whatever their number: find
// the matching sessions, expire and number them in one update, append their
// events. It returns the sessions it expired.
func (s *Store) ExpireWhere(ctx context.Context, reason string, where ...predicate.Session) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	err := s.inSpanningTx(ctx, func(tx *ent.Tx, now time.Time) ([]sessionEvent, error) {
		var events []sessionEvent
		var err error
		ids, events, err = numberSessions(ctx, tx, KindSessionExpired, reason, append(where, session.StatusEQ(session.StatusActive)),
			func(u *sql.UpdateBuilder) {
				u.Set(session.FieldStatus, session.StatusExpired).Set(session.FieldExpiredAt, now).Set(session.FieldUpdatedAt, now)
			})
		return events, err
	})
	return ids, err
}

// ClearReceiptTexts clears the text of every context receipt recorded
// before cutoff, keeping its hash, with one event for each session that had
// one, in a fixed number of statements. Like expiry, it is not the
// session's activity. It returns how many receipts it cleared.
func (s *Store) ClearReceiptTexts(ctx context.Context, cutoff time.Time) (int, error) {
	old := []predicate.ContextReceipt{contextreceipt.TextNotNil(), contextreceipt.CreatedAtLT(cutoff)}
	var cleared int
	err := s.inSpanningTx(ctx, func(tx *ent.Tx, now time.Time) ([]sessionEvent, error) {
		ids, events, err := numberSessions(ctx, tx, KindReceiptTextsCleared, "retention",
			[]predicate.Session{session.HasContextReceiptsWith(old...)}, func(*sql.UpdateBuilder) {})
		if err != nil || len(ids) == 0 {
			return nil, err
		}
		cleared, err = tx.ContextReceipt.Update().Where(append(old, contextreceipt.SessionIDIn(ids...))...).ClearText().Save(ctx)
		return events, err
	})
	return cleared, err
}

// DeleteWhere deletes every session matching where with all its rows (its
// turns, refs and artifacts cascade; its events are deleted here) and
// records one session.deleted event each, which outlive the session.
func (s *Store) DeleteWhere(ctx context.Context, reason string, where ...predicate.Session) ([]uuid.UUID, error) {
	var ids, kids []uuid.UUID
	err := s.inSpanningTx(ctx, func(tx *ent.Tx, now time.Time) ([]sessionEvent, error) {
		var events []sessionEvent
		var err error
		ids, events, err = numberSessions(ctx, tx, KindSessionDeleted, reason, where, func(*sql.UpdateBuilder) {})
		if err != nil || len(ids) == 0 {
			return nil, err
		}
		if _, err := tx.Event.Delete().Where(event.SessionIDIn(ids...)).Exec(ctx); err != nil {
			return nil, err
		}
		_, err = tx.Session.Delete().Where(session.IDIn(ids...)).Exec(ctx)
		kids = make([]uuid.UUID, len(events))
		for i, ev := range events {
			kids[i] = KeyID(ev.session.Tenant, ev.session.ExternalKey)
		}
		return events, err
	})
	if err != nil || len(ids) == 0 {
		return ids, err
	}
	// The keys that still name a deleted session go too, after the commit
	// and in a transaction that holds no session lock: Open locks a key
	// before its session, so deleting keys under the sessions' locks could
	// deadlock with it. An opener that took the key meanwhile has pointed
	// it at its new session, which this leaves alone. A key left behind (a
	// crash between the two) is harmless: Open reuses it.
	//
	// It runs in a transaction block of its own, never as a lone statement:
	// on Citus a lone statement on one shard runs on its worker without a
	// distributed transaction id, and Citus's deadlock detector counts every
	// such backend, and every prepared transaction awaiting its second
	// phase, as one and the same transaction; an opener waiting for the
	// key's row behind one of them while another waits behind the opener
	// then looks like a cycle, and Citus cancels the opener.
	tx, err := s.client.Tx(ctx)
	if err != nil {
		return ids, err
	}
	if _, err := tx.SessionKey.Delete().Where(sessionkey.IDIn(kids...), sessionkey.SessionIDIn(ids...)).Exec(ctx); err != nil {
		_ = tx.Rollback()
		return ids, err
	}
	return ids, tx.Commit()
}

// numberSessions gives every session matching where its next event
// number, changes it as set says, and prepares one event of kind for each.
// It first finds the sessions (a plain query, so the request's tenant
// confinement applies), then updates those that still match where, which
// locks them and returns their numbers: one statement that PostgreSQL
// re-checks against each row's newest version, as a SELECT … FOR UPDATE
// would, but that Citus also runs across shards, which it refuses for FOR
// UPDATE (docs/scale-out.md).
func numberSessions(ctx context.Context, tx *ent.Tx, kind, reason string, where []predicate.Session,
	set func(*sql.UpdateBuilder)) ([]uuid.UUID, []sessionEvent, error) {
	found, err := tx.Session.Query().Where(where...).IDs(ctx)
	if err != nil || len(found) == 0 {
		return nil, nil, err
	}
	matching := sql.Dialect(dialect.Postgres).Select().From(sql.Table(session.Table))
	for _, p := range append(where, session.IDIn(found...)) {
		p(matching)
	}
	update := sql.Dialect(dialect.Postgres).Update(session.Table).
		Add(session.FieldEventSequence, 1).Where(matching.P()).
		Returning(session.FieldID, session.FieldTenant, session.FieldExternalKey, session.FieldEventSequence, session.FieldCurrentTurn)
	set(update)
	query, args := update.Query()
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var ids []uuid.UUID
	var events []sessionEvent
	for rows.Next() {
		r := &ent.Session{}
		if err := rows.Scan(&r.ID, &r.Tenant, &r.ExternalKey, &r.EventSequence, &r.CurrentTurn); err != nil {
			return nil, nil, err
		}
		ids = append(ids, r.ID)
		events = append(events, sessionEvent{session: r, sequence: r.EventSequence, current: r.CurrentTurn,
			Event: Event{Kind: kind, Payload: map[string]any{"reason": reason}}})
	}
	return ids, events, rows.Err()
}
