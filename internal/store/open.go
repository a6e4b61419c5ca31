package store

import (
	"context"
	stdsql "database/sql"
	"errors"
	"time"

	"entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/ent/session"
)

// Event kinds recorded by Open.
const (
	KindSessionOpened  = "session.opened"
	KindSessionExpired = "session.expired"
)

// Opened is the result of Open.
type Opened struct {
	Session *ent.Session
	// Created is false when a live session with the key already existed.
	Created bool
	// Replaced is the expired session of the key that the new session
	// takes over, if any: the one whose TTL ran out just now, or the newest
	// one the reaper or an admin expired.
	Replaced *uuid.UUID
}

// Open gets the live session of a tenant's external key, or creates it with
// the fields set by fill. It is safe under any number of concurrent callers:
// they all get the same single session.
func (s *Store) Open(ctx context.Context, tenant, key string, fill func(*ent.SessionCreate)) (Opened, error) {
	var out Opened
	err := s.inTx(ctx, func(tx *ent.Tx, now time.Time) ([]sessionEvent, error) {
		out = Opened{}
		live := tx.Session.Query().Where(
			session.Tenant(tenant), session.ExternalKey(key), session.StatusEQ(session.StatusActive))
		current, err := live.Clone().ForUpdate().Only(ctx)
		switch {
		case ent.IsNotFound(err):
		case err != nil:
			return nil, err
		case !expired(current, now):
			out.Session = current
			return nil, nil
		}
		var events []sessionEvent
		if current != nil {
			// The reaper has not reached it yet, but its TTL has run out: it
			// expires now and the key passes to a fresh session.
			expiry := nextEvent(current, Event{Kind: KindSessionExpired,
				Payload: map[string]any{"reason": "ttl", "replacedBy": "open"}})
			old, err := tx.Session.UpdateOne(current).
				SetStatus(session.StatusExpired).SetExpiredAt(now).SetEventSequence(expiry.sequence).Save(ctx)
			if err != nil {
				return nil, err
			}
			events = append(events, expiry)
			out.Replaced = &old.ID
		} else {
			// Expired earlier, by the reaper or an admin: name the newest.
			last, err := tx.Session.Query().Where(session.Tenant(tenant), session.ExternalKey(key),
				session.StatusEQ(session.StatusExpired)).Order(ent.Desc(session.FieldExpiredAt)).FirstID(ctx)
			switch {
			case err == nil:
				out.Replaced = &last
			case !ent.IsNotFound(err):
				return nil, err
			}
		}
		create := tx.Session.Create().SetTenant(tenant).SetExternalKey(key).
			SetCreatedAt(now).SetUpdatedAt(now).SetLastActiveAt(now).SetEventSequence(1)
		fill(create)
		ttl, _ := create.Mutation().TTLSeconds()
		create.SetExpiresAt(now.Add(time.Duration(ttl) * time.Second))
		id, err := create.
			OnConflict(sql.ConflictColumns(session.FieldTenant, session.FieldExternalKey),
				// A literal, not a parameter: PostgreSQL matches the partial
				// index by its predicate, which a generic plan of a cached
				// prepared statement cannot do with a parameter.
				sql.ConflictWhere(sql.ExprP("status = 'ACTIVE'"))).
			DoNothing().ID(ctx)
		if errors.Is(err, stdsql.ErrNoRows) {
			// A concurrent caller created it first and has committed.
			out.Session, err = live.Only(ctx)
			return nil, err
		}
		if err != nil {
			return nil, err
		}
		if out.Session, err = tx.Session.Get(ctx, id); err != nil {
			return nil, err
		}
		out.Created = true
		payload := map[string]any{"tenant": tenant, "externalKey": key}
		if out.Replaced != nil {
			payload["replaced"] = out.Replaced.String()
		}
		return append(events, sessionEvent{session: out.Session, sequence: 1, Event: Event{Kind: KindSessionOpened, Payload: payload}}), nil
	})
	return out, err
}
