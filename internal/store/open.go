package store

import (
	"context"
	"crypto/md5" //nolint:gosec // an id derived from a key, not a secret's hash
	stdsql "database/sql"
	"errors"
	"strconv"
	"time"

	"entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/ent/event"
	"sessiongraph/ent/predicate"
	"sessiongraph/ent/session"
	"sessiongraph/ent/sessionkey"
)

// Opened is the result of Open.
type Opened struct {
	Session *ent.Session
	// Created is false when a live session with the key already existed.
	Created bool
	// Replaced is the expired session of the key that the new session
	// takes over, if any: the key's last session, whose TTL ran out just
	// now or which the reaper or an admin expired. A deleted session is
	// not named (its key goes with it).
	Replaced *uuid.UUID
}

// KeyID is the id of a tenant's external key in session_keys: the MD5 of
// the tenant's length in bytes, a colon, the tenant and the key (so no two
// pairs share it), as the migration distributable computes it in SQL.
func KeyID(tenant, key string) uuid.UUID {
	return uuid.UUID(md5.Sum([]byte(strconv.Itoa(len(tenant)) + ":" + tenant + key)))
}

// Keyed reads the session that a tenant's external key names (its live
// session, or its newest) and that matches where, or returns ent's not
// found error. It reads session_keys by its primary key, then the session
// by its id, in two statements that each name their row's distribution
// value: on Citus two router queries. (One statement with the key's read as
// a subquery costs a round trip less on one PostgreSQL, but Citus runs the
// subquery first and cannot prune the session's read by its result: every
// open would ask every shard.)
func Keyed(ctx context.Context, keys *ent.SessionKeyClient, sessions *ent.SessionClient, tenant, key string,
	where ...predicate.Session) (*ent.Session, error) {
	named, err := keys.Query().Where(sessionkey.ID(KeyID(tenant, key))).Only(ctx)
	if err != nil {
		return nil, err
	}
	id := named.SessionID
	return sessions.Query().Where(append(where, session.ID(id))...).Only(ctx)
}

// Open gets the live session of a tenant's external key, or creates it with
// the fields set by fill. It is safe under any number of concurrent callers:
// they all get the same single session. The key's row in session_keys is
// what makes it so: whoever creates a session locks it first and points it
// at the new session in the same transaction (sessions have no unique index
// on the key, so that they can be distributed by id).
func (s *Store) Open(ctx context.Context, tenant, key string, fill func(*ent.SessionCreate)) (Opened, error) {
	var out Opened
	kid := KeyID(tenant, key)
	// Most opens find their session live: two reads, no lock, no
	// transaction.
	current, err := Keyed(ctx, s.client.SessionKey, s.client.Session, tenant, key)
	switch {
	case ent.IsNotFound(err):
	case err != nil:
		return Opened{}, err
	case !expired(current, s.now().UTC()):
		return Opened{Session: current}, nil
	}
	// Creating a session writes its key's row and its own, on two shards.
	err = s.inSpanningTx(ctx, func(tx *ent.Tx, now time.Time) ([]sessionEvent, error) {
		out = Opened{}
		// Lock the key's row, creating it, so that openers of the key
		// queue here; then look again at the session it names, locked.
		// Locks are taken key first, then session, and the only other
		// writer of keys (DeleteWhere's cleanup) holds no session lock, so
		// openers cannot deadlock with anyone.
		fresh := uuid.Must(uuid.NewV7())
		named, err := lockKey(ctx, tx, kid, tenant, key, fresh)
		if err != nil {
			return nil, err
		}
		var events []sessionEvent
		if named.SessionID != fresh {
			current, err = lockNamed(ctx, tx, named.SessionID)
			switch {
			case ent.IsNotFound(err):
				// Deleted, and the key left behind: there is nothing to name.
			case err != nil:
				return nil, err
			case !expired(current, now):
				// A concurrent opener created it and has committed.
				out.Session = current
				return nil, nil
			case current.Status == session.StatusActive:
				// The reaper has not reached it yet, but its TTL has run
				// out: it expires now and the key passes to a fresh session.
				expiry := nextEvent(current, Event{Kind: KindSessionExpired,
					Payload: map[string]any{"reason": "ttl", "replacedBy": "open"}})
				err := tx.Session.UpdateOne(current).
					SetStatus(session.StatusExpired).SetExpiredAt(now).SetEventSequence(expiry.sequence).Exec(ctx)
				if err != nil {
					return nil, err
				}
				events = append(events, expiry)
				out.Replaced = &current.ID
			default:
				// Expired earlier, by the reaper or an admin.
				out.Replaced = &current.ID
			}
			if err := tx.SessionKey.UpdateOneID(kid).SetSessionID(fresh).Exec(ctx); err != nil {
				return nil, err
			}
		}
		create := tx.Session.Create().SetID(fresh).SetTenant(tenant).SetExternalKey(key).
			SetCreatedAt(now).SetUpdatedAt(now).SetLastActiveAt(now).SetEventSequence(1)
		fill(create)
		ttl, _ := create.Mutation().TTLSeconds()
		create.SetExpiresAt(now.Add(time.Duration(ttl) * time.Second))
		if err := create.Exec(ctx); err != nil {
			return nil, err
		}
		if out.Session, err = tx.Session.Get(ctx, fresh); err != nil {
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

// lockKey locks the key's row in session_keys, first creating it to name
// fresh if it is missing. A deletion's cleanup can delete the row between
// the insert that found it and the lock; then the insert is tried again.
func lockKey(ctx context.Context, tx *ent.Tx, kid uuid.UUID, tenant, key string, fresh uuid.UUID) (*ent.SessionKey, error) {
	for {
		err := tx.SessionKey.Create().SetID(kid).SetTenant(tenant).SetExternalKey(key).SetSessionID(fresh).
			OnConflict(sql.ConflictColumns(sessionkey.FieldID)).DoNothing().Exec(ctx)
		if err != nil && !errors.Is(err, stdsql.ErrNoRows) {
			return nil, err
		}
		named, err := tx.SessionKey.Query().Where(sessionkey.ID(kid)).ForUpdate().Only(ctx)
		if !ent.IsNotFound(err) {
			return named, err
		}
	}
}

// namedRetry is how long Open waits before it looks again for a session
// its key names that is neither there nor deleted.
const namedRetry = 5 * time.Millisecond

// lockNamed locks the session a key names, under the key's lock, or
// returns ent's not found error once the session is known to be deleted
// (its session.deleted event, which outlives it, is there). A session
// that is neither there nor deleted is one whose creation has committed
// on the key's shard but not yet on its own: on Citus the two commit in
// turn, by two-phase commit. It will be there in a moment, so Open looks
// again rather than give the key to a new session and leave that one live
// without its key. On one PostgreSQL a session the key names is always
// there or deleted.
func lockNamed(ctx context.Context, tx *ent.Tx, id uuid.UUID) (*ent.Session, error) {
	wait := namedRetry
	for {
		current, err := tx.Session.Query().Where(session.ID(id)).ForUpdate().Only(ctx)
		if !ent.IsNotFound(err) {
			return current, err
		}
		deleted, err := tx.Event.Query().Where(event.SessionID(id), event.Kind(KindSessionDeleted)).Exist(ctx)
		if err != nil {
			return nil, err
		}
		if deleted {
			return nil, &ent.NotFoundError{}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}
