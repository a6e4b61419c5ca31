package access

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/google/uuid"
	"golang.org/x/time/rate"

	"sessiongraph/internal/apperr"
	"sessiongraph/internal/config"
)

// Fairness admits a key's requests within its own and its tenant's limits,
// so that one key at full speed cannot take the replica from the others
// (one key at 1,587 requests/s moved another tenant's p99 from 9.5 ms to
// 185 ms). Admin keys, which act across tenants, have the key limits only.
// The counts are per replica: N replicas admit N times as much.
type Fairness struct {
	limits  config.Fairness
	mu      sync.Mutex
	keys    map[uuid.UUID]*allowance
	tenants map[string]*allowance
}

// allowance is one key's or tenant's bucket and its requests in flight.
type allowance struct {
	bucket   *rate.Limiter
	inFlight int
}

// NewFairness returns a Fairness with the limits.
func NewFairness(limits config.Fairness) *Fairness {
	return &Fairness{limits: limits, keys: map[uuid.UUID]*allowance{}, tenants: map[string]*allowance{}}
}

// Refusal is a request refused for a limit: Err is RATE_LIMITED, and the
// client should wait RetryAfter before trying again.
type Refusal struct {
	Err        *apperr.Error
	RetryAfter time.Duration
}

func (r *Refusal) Error() string { return r.Err.Message }

// Unwrap is the refusal's coded error.
func (r *Refusal) Unwrap() error { return r.Err }

// RetryAfterSeconds is RetryAfter rounded up to whole seconds, at least 1,
// for the Retry-After header.
func (r *Refusal) RetryAfterSeconds() int {
	return max(1, int(math.Ceil(r.RetryAfter.Seconds())))
}

// Admit takes one request of p from its key's and tenant's buckets and,
// when inFlight is set (a query or mutation, not a long-lived stream),
// counts it in flight until release is called. A request that comes a
// little early for its tokens (MaxRateWait at most) is admitted to wait
// for them: the caller waits wait before it runs, counted in flight. It
// refuses without taking anything when the tokens are further away, or
// the key or tenant has its most requests in flight.
func (f *Fairness) Admit(p *Principal, inFlight bool) (release func(), wait time.Duration, refused *Refusal) {
	now := time.Now()
	f.mu.Lock()
	defer f.mu.Unlock()
	key := allowanceOf(f.keys, p.KeyID, f.limits.KeyRate, f.limits.KeyBurst)
	var tenant *allowance
	if !p.IsAdmin() {
		tenant = allowanceOf(f.tenants, p.Tenant, f.limits.TenantRate, f.limits.TenantBurst)
	}
	switch {
	case inFlight && key.inFlight >= f.limits.KeyInFlight:
		return nil, 0, tooMany("this API key has %d requests in flight, the most one key may (setting -key-in-flight): wait for an answer before sending more", key.inFlight)
	case inFlight && tenant != nil && tenant.inFlight >= f.limits.TenantInFlight:
		return nil, 0, tooMany("the keys of tenant %q have %d requests in flight, the most one tenant may (setting -tenant-in-flight): wait for an answer before sending more", p.Tenant, tenant.inFlight)
	}
	kr := key.bucket.ReserveN(now, 1)
	wait = kr.DelayFrom(now)
	if wait > MaxRateWait || wait > 0 && !inFlight {
		kr.CancelAt(now)
		return nil, 0, slowDown(wait, "this API key sends more than %d requests a second, its limit (setting -key-rate, burst -key-burst): retry after the time Retry-After gives", f.limits.KeyRate)
	}
	if tenant != nil {
		tr := tenant.bucket.ReserveN(now, 1)
		tw := tr.DelayFrom(now)
		if tw > MaxRateWait || tw > 0 && !inFlight {
			tr.CancelAt(now)
			kr.CancelAt(now)
			return nil, 0, slowDown(tw, "the keys of tenant %q send more than %d requests a second, its limit (setting -tenant-rate, burst -tenant-burst): retry after the time Retry-After gives", p.Tenant, f.limits.TenantRate)
		}
		wait = max(wait, tw)
	}
	if !inFlight {
		return func() {}, 0, nil
	}
	key.inFlight++
	if tenant != nil {
		tenant.inFlight++
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			key.inFlight--
			if tenant != nil {
				tenant.inFlight--
			}
		})
	}, wait, nil
}

// MaxRateWait is how early for its tokens a query or mutation may come and
// still be admitted, to wait for them. Waiting costs the server a parked
// request, counted in flight; a 429 costs it the request's parsing and
// answer, and a client that does not wait for Retry-After sends again at
// once: a key a little over its rate is slowed to it, not refused. It is
// well under the 1 s a 429's Retry-After says at least.
const MaxRateWait = 250 * time.Millisecond

// allowanceOf returns the allowance of id in m, made on first use. There
// is one per key or tenant that has sent a request: as many as the
// database holds keys, a few hundred bytes each.
func allowanceOf[K comparable](m map[K]*allowance, id K, perSecond, burst int) *allowance {
	a := m[id]
	if a == nil {
		a = &allowance{bucket: rate.NewLimiter(rate.Limit(perSecond), burst)}
		m[id] = a
	}
	return a
}

// inFlightRetry is what Retry-After says to a request refused for the
// requests in flight: they are short, so soon.
const inFlightRetry = time.Second

func tooMany(format string, args ...any) *Refusal {
	return &Refusal{Err: apperr.New(apperr.RateLimited, format, args...), RetryAfter: inFlightRetry}
}

func slowDown(wait time.Duration, format string, args ...any) *Refusal {
	return &Refusal{Err: apperr.New(apperr.RateLimited, format, args...), RetryAfter: wait}
}

// Delay waits d, or until ctx ends, which it returns the error of.
func Delay(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
