package access

import (
	"context"
	"sync"

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
	// changed is closed, and replaced, whenever a claim is given back.
	changed chan struct{}
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
		changed:     make(chan struct{}),
	}
}

// Claim waits until p's key, its tenant and (for a read) reads as a whole
// are under their shares, claims one operation in the database for each,
// and returns what gives it back. It fails with ctx's error when ctx ends
// first.
func (s *PoolShares) Claim(ctx context.Context, p *Principal, write bool) (release func(), err error) {
	tenant := !p.IsAdmin()
	for {
		s.mu.Lock()
		if s.byKey[p.KeyID] < s.KeyShare && (!tenant || s.byTenant[p.Tenant] < s.TenantShare) && (write || s.reads < s.ReadShare) {
			break
		}
		changed := s.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	defer s.mu.Unlock()
	s.byKey[p.KeyID]++
	if tenant {
		s.byTenant[p.Tenant]++
	}
	if !write {
		s.reads++
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.byKey[p.KeyID]--; s.byKey[p.KeyID] == 0 {
				delete(s.byKey, p.KeyID)
			}
			if tenant {
				if s.byTenant[p.Tenant]--; s.byTenant[p.Tenant] == 0 {
					delete(s.byTenant, p.Tenant)
				}
			}
			if !write {
				s.reads--
			}
			close(s.changed)
			s.changed = make(chan struct{})
		})
	}, nil
}
