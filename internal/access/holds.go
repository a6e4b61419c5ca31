package access

import (
	"context"
	"fmt"
	"sync"

	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/ent/apikey"
	"sessiongraph/internal/apperr"
)

// ErrKeyRevoked ends, and refuses every operation of, a connection whose
// key was revoked after it authenticated.
var ErrKeyRevoked = apperr.New(apperr.Unauthenticated,
	"this API key was revoked while the connection was open; reconnect with a valid key")

// A long-lived connection (a WebSocket, an SSE stream) authenticates once,
// so a revocation must reach it rather than wait for its next request. Keys
// keeps the connections it authenticated by key, and ends them when it
// hears a key was revoked: a hold is one such connection.
type hold struct {
	end context.CancelCauseFunc
}

// holds are the open connections of this replica, by key.
type holds struct {
	mu    sync.Mutex
	byKey map[uuid.UUID]map[*hold]struct{}
}

func (hs *holds) add(id uuid.UUID, h *hold) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.byKey == nil {
		hs.byKey = map[uuid.UUID]map[*hold]struct{}{}
	}
	set := hs.byKey[id]
	if set == nil {
		set = map[*hold]struct{}{}
		hs.byKey[id] = set
	}
	set[h] = struct{}{}
}

func (hs *holds) remove(id uuid.UUID, h *hold) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	delete(hs.byKey[id], h)
	if len(hs.byKey[id]) == 0 {
		delete(hs.byKey, id)
	}
}

// endKey ends every connection of the key.
func (hs *holds) endKey(id uuid.UUID) {
	hs.mu.Lock()
	set := hs.byKey[id]
	delete(hs.byKey, id)
	hs.mu.Unlock()
	for h := range set {
		h.end(ErrKeyRevoked)
	}
}

// keys lists the keys that have open connections.
func (hs *holds) keys() []uuid.UUID {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	out := make([]uuid.UUID, 0, len(hs.byKey))
	for id := range hs.byKey {
		out = append(out, id)
	}
	return out
}

type heldKey struct{}

// Hold ties a long-lived connection that p's key authenticated (ctx) to
// the key. The context it returns ends, with ErrKeyRevoked as its cause, as
// soon as this replica hears the key was revoked: at once on the replica
// that revoked it, within the event hub's doorbell latency elsewhere. It
// returns ErrKeyRevoked when the key was revoked since it authenticated.
// The connection is forgotten when ctx ends.
func (k *Keys) Hold(ctx context.Context, p *Principal) (context.Context, error) {
	held, end := context.WithCancelCause(context.WithValue(ctx, heldKey{}, true))
	h := &hold{end: end}
	// Registered before the check below: a revocation heard from here on
	// ends the hold, and one heard before it shows in the check.
	k.holds.add(p.KeyID, h)
	context.AfterFunc(held, func() { k.holds.remove(p.KeyID, h) })
	if err := k.checkHeld(ctx, p.KeyID); err != nil {
		end(err)
		k.holds.remove(p.KeyID, h)
		return nil, err
	}
	return held, nil
}

// Held reports whether ctx belongs to a long-lived connection (see Hold).
func Held(ctx context.Context) bool {
	v, _ := ctx.Value(heldKey{}).(bool)
	return v
}

// checkHeld makes sure a key that is about to be held is not revoked: the
// cache vouches for a key it holds while it hears every revocation, else
// the database answers.
func (k *Keys) checkHeld(ctx context.Context, id uuid.UUID) error {
	k.mu.Lock()
	_, cached := k.byID[id]
	vouched := cached && k.live
	k.mu.Unlock()
	if vouched {
		return nil
	}
	return k.Recheck(ctx, id)
}

// Recheck asks the database whether a key is still valid: ErrKeyRevoked
// when it is revoked (and the cache forgets it), nil when it is valid. A
// long-lived connection checks its key so before each operation, so that
// none runs once the revocation has committed, even before this replica's
// hub has heard of it. The connections themselves end when the hub does:
// ending them here would close a socket before it could carry the refusal.
func (k *Keys) Recheck(ctx context.Context, id uuid.UUID) error {
	row, err := k.client.APIKey.Query().Where(apikey.ID(id)).Select(apikey.FieldRevokedAt).Only(System(ctx))
	switch {
	case ent.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("checking the API key: %w", err)
	case row.RevokedAt == nil:
		return nil
	}
	k.evict(id)
	return ErrKeyRevoked
}

// revoked forgets a revoked key and ends every connection it holds.
func (k *Keys) revoked(id uuid.UUID) {
	k.evict(id)
	k.holds.endKey(id)
}

// recheckHolds ends the connections of keys revoked while Keys heard no
// revocations (before its first subscription, or while it resubscribed).
// It runs once the subscription is open, so a revocation it does not see
// comes through the subscription.
func (k *Keys) recheckHolds(ctx context.Context) error {
	ids := k.holds.keys()
	if len(ids) == 0 {
		return nil
	}
	revoked, err := k.client.APIKey.Query().Where(apikey.IDIn(ids...), apikey.RevokedAtNotNil()).IDs(System(ctx))
	if err != nil {
		return fmt.Errorf("checking the keys of open connections: %w", err)
	}
	for _, id := range revoked {
		k.revoked(id)
	}
	return nil
}
