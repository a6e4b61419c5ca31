package access

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
)

// PoolShares keeps any one key, any one tenant, and reads as a whole from
// holding the whole database pool. Twelve slow searches of one READER key
// once held all 8 connections for 30 s: another tenant's 3 ms write timed
// out, and a new key could not authenticate.
//
// The unit is an operation in the database: a query or mutation claims its
// share before it runs and gives it back when it is answered, so one claim
// stands for the connection(s) of one operation (a transaction, or the
// statements of a query's fields). An operation over its share waits,
// without a connection, for one of its key's (or tenant's) operations to
// end, or for its deadline (TIMEOUT). The shares are of the pool of n
// connections:
//   - a key may run KeyShare operations at once, a tenant's keys together
//     TenantShare (admin keys, across tenants, their key share only);
//   - reads together may run n - n/4 (at least one less than n): a quarter
//     of the pool is always left to writes.
//
// Authentication does not use this pool at all: API keys are checked on a
// small pool of their own (internal/app), so a full pool never stops a key
// from being checked. What a claim does not cover (the server's own work:
// the event hub, the reaper, the key cache) is small and bounded by itself.
type PoolShares struct {
	KeyShare, TenantShare, ReadShare int

	mu       sync.Mutex
	byKey    map[uuid.UUID]int
	byTenant map[string]int
	reads    int
	// waiting are the claims over their shares, in the order they came:
	// a claim given back goes to the first of them that fits, so that no
	// operation waits behind later ones of its own key (many writes of one
	// runtime on one session, each holding the row lock in turn, once let
	// one of them lose every race for 20 s and answer TIMEOUT).
	waiting []*shareClaim
}

// shareClaim is one operation's claim on the shares.
type shareClaim struct {
	key           uuid.UUID
	tenant        string
	tenantCounted bool // not an admin key: the tenant's share counts it
	write         bool
	// ok is set, under the lock, when the claim is granted; granted, made
	// only for a claim that waits, is closed then too.
	ok      bool
	granted chan struct{}
}

// NewPoolShares divides a pool of n connections: keyPercent and
// tenantPercent of it (at least one each) to a key and a tenant, and all
// but a quarter (at least one) to reads.
func NewPoolShares(n, keyPercent, tenantPercent int) *PoolShares {
	return &PoolShares{
		KeyShare:    max(1, n*keyPercent/100),
		TenantShare: max(1, n*tenantPercent/100),
		ReadShare:   max(1, n-max(1, n/4)),
		byKey:       map[uuid.UUID]int{},
		byTenant:    map[string]int{},
	}
}

// Claim waits until p's key, its tenant and (for a read) reads as a whole
// are under their shares, claims one operation in the database for each,
// and returns what gives it back. Claims that wait are served in the order
// they came, each as soon as its own shares allow. It fails with ctx's
// error when ctx ends first.
func (s *PoolShares) Claim(ctx context.Context, p *Principal, write bool) (release func(), err error) {
	return s.ClaimUntil(ctx, time.Time{}, p, write)
}

// ClaimUntil is Claim that also gives up at deadline (none when it is
// zero), with context.DeadlineExceeded: the deadline costs a timer only
// when the claim has to wait.
func (s *PoolShares) ClaimUntil(ctx context.Context, deadline time.Time, p *Principal, write bool) (release func(), err error) {
	c := &shareClaim{key: p.KeyID, tenant: p.Tenant, tenantCounted: !p.IsAdmin(), write: write}
	s.mu.Lock()
	s.waiting = append(s.waiting, c)
	s.grantLocked()
	if !c.ok {
		c.granted = make(chan struct{})
	}
	s.mu.Unlock()
	if c.granted != nil {
		if !deadline.IsZero() {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, deadline)
			defer cancel()
		}
		select {
		case <-c.granted:
		case <-ctx.Done():
			s.mu.Lock()
			if c.ok { // granted as ctx ended: give it back
				s.mu.Unlock()
				s.giveBack(c)
			} else {
				s.waiting = slices.DeleteFunc(s.waiting, func(w *shareClaim) bool { return w == c })
				s.mu.Unlock()
			}
			return nil, ctx.Err()
		}
	}
	var once sync.Once
	return func() { once.Do(func() { s.giveBack(c) }) }, nil
}

// fitsLocked reports whether c's key, tenant and reads are under their shares.
func (s *PoolShares) fitsLocked(c *shareClaim) bool {
	return s.byKey[c.key] < s.KeyShare && (!c.tenantCounted || s.byTenant[c.tenant] < s.TenantShare) &&
		(c.write || s.reads < s.ReadShare)
}

// grantLocked gives their shares to the waiting claims that fit, first come
// first served.
func (s *PoolShares) grantLocked() {
	kept := s.waiting[:0]
	for _, c := range s.waiting {
		if !s.fitsLocked(c) {
			kept = append(kept, c)
			continue
		}
		s.byKey[c.key]++
		if c.tenantCounted {
			s.byTenant[c.tenant]++
		}
		if !c.write {
			s.reads++
		}
		c.ok = true
		if c.granted != nil {
			close(c.granted)
		}
	}
	clear(s.waiting[len(kept):])
	s.waiting = kept
}

// giveBack returns c's shares and hands them on.
func (s *PoolShares) giveBack(c *shareClaim) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byKey[c.key]--; s.byKey[c.key] == 0 {
		delete(s.byKey, c.key)
	}
	if c.tenantCounted {
		if s.byTenant[c.tenant]--; s.byTenant[c.tenant] == 0 {
			delete(s.byTenant, c.tenant)
		}
	}
	if !c.write {
		s.reads--
	}
	s.grantLocked()
}

// Waiting returns how many claims wait for their shares.
func (s *PoolShares) Waiting() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.waiting)
}
