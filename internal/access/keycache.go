package access

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/ent/apikey"
	"sessiongraph/ent/event"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/events"
	"sessiongraph/internal/store"
)

// touchEvery bounds how often a key's lastUsedAt is written: once a minute
// is precise enough to find unused keys, and costs no write per request.
const touchEvery = time.Minute

// maxCached bounds the cache; past it, the cache starts over. Only valid
// keys are cached, so only an installation with that many keys in use
// (not a client sending made-up keys) can fill it.
const maxCached = 10_000

// resubscribeDelay paces resubscribing after the revocation stream broke.
const resubscribeDelay = time.Second

// Keys authenticates API keys and remembers the keys it has seen, so that a
// repeat request costs no statement. It serves from memory only while it is
// subscribed to revocation events (Run): each one evicts its key, and when
// the subscription ends, Keys forgets every key and looks each one up until
// it has subscribed again.
//
// What remains of staleness: a key revoked on another replica is refused
// here once this replica's hub has read the revocation event, that is after
// the doorbell's latency (milliseconds; the hub's 2-second poll if a
// doorbell is lost), and once every transaction older than the revocation
// has ended (the hub reads below the snapshot horizon; docs/events.md). On
// the revoking replica it is refused at once. Should
// the hub stop reading events while the subscription stays open, the
// lastUsedAt touch, which matches only an unrevoked key, still finds the
// revocation within touchEvery.
//
// Keys also ends the long-lived connections (WebSockets, SSE streams) a
// revoked key opened, when it hears of the revocation (holds.go).
type Keys struct {
	client    *ent.Client
	store     *store.Store
	subscribe Subscribe
	log       *slog.Logger

	mu   sync.Mutex
	live bool // subscribed to revocations: byHash may be used
	// gen changes whenever a cached key may have turned stale (a revocation,
	// a broken or new subscription); a lookup is cached only if gen did
	// not change while it ran, so a revocation that committed during the
	// lookup can never be cached over.
	gen    uint64
	byHash map[string]*cachedKey
	byID   map[uuid.UUID]string

	// holds are the long-lived connections keys authenticated (holds.go).
	holds holds
}

type cachedKey struct {
	principal Principal
	touched   time.Time // lastUsedAt as this replica last read or wrote it
}

// NewKeys returns a Keys that looks keys up in client, revokes them through
// st and hears of revocations through subscribe. It caches nothing until
// Run has subscribed.
func NewKeys(client *ent.Client, st *store.Store, subscribe Subscribe, log *slog.Logger) *Keys {
	k := &Keys{client: client, store: st, subscribe: subscribe, log: log}
	k.forgetAllLocked()
	return k
}

// Subscribe is where Keys hears of events: the hub's Subscribe.
type Subscribe func(ctx context.Context, f events.Filter, after events.Cursor) *events.Stream

// Run keeps Keys subscribed to revocations until ctx ends, resubscribing
// whenever the stream ends early (too slow, database trouble).
func (k *Keys) Run(ctx context.Context) {
	for {
		err := k.follow(ctx, k.subscribe)
		if ctx.Err() != nil {
			return
		}
		k.log.Warn("API key cache off until it resubscribes to revocations", "error", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(resubscribeDelay):
		}
	}
}

// follow subscribes to revocations, the events of the store's system
// session, and caches while the subscription lasts. It subscribes from the
// newest revocation as read before it subscribes, not from the last one it
// saw: it forgot every key when the last subscription ended, so no key it
// will cache was read before this one starts.
func (k *Keys) follow(ctx context.Context, subscribe Subscribe) error {
	after, err := newestRevocation(ctx, k.client)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st := subscribe(ctx, events.Filter{SessionID: &store.SystemSession}, events.AfterSequence(after))
	k.setLive(true)
	defer k.setLive(false)
	if err := k.recheckHolds(ctx); err != nil {
		return err
	}
	for ev := range st.C {
		if ev.Kind != store.KindKeyRevoked {
			continue
		}
		raw, _ := ev.Payload["keyID"].(string)
		id, err := uuid.Parse(raw)
		if err != nil {
			return fmt.Errorf("revocation event %d names no key: %w", ev.Sequence, err)
		}
		k.revoked(id)
	}
	if err := st.Err(); err != nil {
		return err
	}
	return fmt.Errorf("the event hub closed the revocation stream")
}

// newestRevocation is the sequence of the newest committed event of the
// system session (0 for none).
func newestRevocation(ctx context.Context, client *ent.Client) (int64, error) {
	ev, err := client.Event.Query().Where(event.SessionID(store.SystemSession)).
		Order(ent.Desc(event.FieldSequence)).Select(event.FieldSequence).First(System(ctx))
	if ent.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("events position: %w", err)
	}
	return ev.Sequence, nil
}

// Caching reports whether Keys is subscribed to revocations and so serves
// keys it has seen from memory.
func (k *Keys) Caching() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.live
}

// Authenticate returns the principal of a bearer key, or UNAUTHENTICATED.
func (k *Keys) Authenticate(ctx context.Context, key string) (*Principal, error) {
	if !strings.HasPrefix(key, keyPrefix) {
		return nil, apperr.New(apperr.Unauthenticated, "this API key is not valid: sessiongraph keys start with %q", keyPrefix)
	}
	hash := hashKey(key)
	k.mu.Lock()
	gen := k.gen
	c, cached := k.byHash[hash]
	var p Principal
	touch := false
	if cached {
		p = c.principal
		// Claimed under the lock, so concurrent requests touch once.
		if touch = time.Since(c.touched) > touchEvery; touch {
			c.touched = time.Now()
		}
	}
	k.mu.Unlock()
	if cached {
		if !touch || k.touch(ctx, p.KeyID) {
			return &p, nil
		}
		k.evict(p.KeyID)
		return k.Authenticate(ctx, key) // the touch found it revoked: look it up for the reason
	}
	return k.lookup(ctx, hash, gen)
}

// lookup reads the key from the database and caches it if gen is still
// current when it is done.
func (k *Keys) lookup(ctx context.Context, hash string, gen uint64) (*Principal, error) {
	row, err := k.client.APIKey.Query().Where(apikey.Hash(hash)).Only(System(ctx))
	if ent.IsNotFound(err) {
		return nil, apperr.New(apperr.Unauthenticated, "this API key is not valid: check that it was copied whole, or ask an admin for a new one")
	}
	if err != nil {
		return nil, fmt.Errorf("looking up the API key: %w", err)
	}
	if row.RevokedAt != nil {
		return nil, apperr.New(apperr.Unauthenticated, "this API key (%s…) was revoked on %s; ask an admin for a new one",
			row.Prefix, row.RevokedAt.UTC().Format(time.RFC3339))
	}
	p := Principal{KeyID: row.ID, Name: row.Name, Role: row.Role, Tenant: row.Tenant}
	var touched time.Time
	if row.LastUsedAt != nil {
		touched = *row.LastUsedAt
	}
	if time.Since(touched) > touchEvery {
		touched = time.Now()
		if !k.touch(ctx, row.ID) {
			return &p, nil // revoked since the lookup: this request is served as before, nothing is cached
		}
	}
	k.remember(gen, hash, p, touched)
	return &p, nil
}

// touch stamps a key's lastUsedAt, best effort: a failed write must not
// fail the request. It reports false when the key was revoked or deleted
// meanwhile, as the stamp matches only a key that is not revoked.
func (k *Keys) touch(ctx context.Context, id uuid.UUID) bool {
	n, err := k.client.APIKey.Update().Where(apikey.ID(id), apikey.RevokedAtIsNil()).
		SetLastUsedAt(time.Now()).Save(System(ctx))
	return err != nil || n == 1
}

// Revoke revokes a key for good, on every replica: here at once, elsewhere
// once their hubs read the revocation event, and ends every connection it
// holds (see Hold). Revoking a revoked key changes nothing.
func (k *Keys) Revoke(ctx context.Context, id uuid.UUID) (*ent.APIKey, error) {
	row, err := k.store.RevokeKey(ctx, id)
	if err != nil {
		k.evict(id) // a failed commit may still have committed; its event will say
		return nil, err
	}
	k.revoked(id)
	return row, nil
}

func (k *Keys) remember(gen uint64, hash string, p Principal, touched time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.live || k.gen != gen {
		return
	}
	if len(k.byHash) >= maxCached {
		k.forgetAllLocked()
	}
	k.byHash[hash] = &cachedKey{principal: p, touched: touched}
	k.byID[p.KeyID] = hash
}

func (k *Keys) evict(id uuid.UUID) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.gen++
	if hash, ok := k.byID[id]; ok {
		delete(k.byHash, hash)
		delete(k.byID, id)
	}
}

// setLive turns caching on or off; either way nothing cached so far, or
// being looked up, is kept.
func (k *Keys) setLive(live bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.live = live
	k.gen++
	k.forgetAllLocked()
}

func (k *Keys) forgetAllLocked() {
	k.byHash = map[string]*cachedKey{}
	k.byID = map[uuid.UUID]string{}
}
