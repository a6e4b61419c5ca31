package access

import (
	"context"
	"errors"
	"time"

	"sessiongraph/internal/apperr"
)

// Class is what an operation is, as its door parsed it: a subscription is
// known by its operation, never by a header.
type Class int

// The classes of operation.
const (
	Query Class = iota
	Mutation
	Subscription
)

// Admission is the one admission every operation passes, whatever its
// door (GraphQL over POST, GET, SSE or WebSocket, an MCP call): its key's
// role, its key's and tenant's rate and requests in flight (Fairness), a
// slot to run in (Slots), its share of the database pool (PoolShares), and
// its class's deadline. A rule kept by one transport only is a rule the
// next transport skips: SSE and MCP once skipped the in-flight limit and
// the slots, and a flood over them moved another tenant's p99 up to 20x.
// A nil part admits everything.
type Admission struct {
	Fairness *Fairness
	Slots    *Slots
	Shares   *PoolShares
	// QueryTimeout and MutationTimeout bound a query or mutation from its
	// admission on, its waits for its turn included (0: no bound).
	QueryTimeout, MutationTimeout time.Duration
}

// Admit admits an operation of class of p, named by what in a refusal (a
// READER key's write: "this mutation", "begin_turn"). A subscription counts
// against the rate when it starts, nothing more: it holds no connection
// while it waits for events, and its caps are its transport's. A query or
// mutation counts in flight until release; a little early for its tokens,
// it waits for them; then it waits, within its class's deadline, for its
// slot and its share of the pool. Admit returns the context to run it in
// (with that deadline) and what releases it all, or a coded error:
// FORBIDDEN, RATE_LIMITED (a *Refusal, with its Retry-After), TIMEOUT or
// CANCELLED for a wait that ended first.
func (a *Admission) Admit(ctx context.Context, p *Principal, class Class, what string) (context.Context, func(), error) {
	if class == Mutation && !p.CanWrite() {
		return nil, nil, apperr.New(apperr.Forbidden, "this key is a READER key: it may read, not run %s, which writes", what)
	}
	release := func() {}
	var wait time.Duration
	if a.Fairness != nil {
		var refused *Refusal
		if release, wait, refused = a.Fairness.Admit(p, class != Subscription); refused != nil {
			return nil, nil, refused
		}
	}
	if class == Subscription {
		return ctx, release, nil
	}
	timeout := a.QueryTimeout
	if class == Mutation {
		timeout = a.MutationTimeout
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		release = then(cancel, release)
	}
	if err := Delay(ctx, wait); err != nil {
		release()
		return nil, nil, waitEnded(err, errTurnWaited)
	}
	if a.Slots != nil {
		giveBack, err := a.Slots.Take(ctx, p)
		if err != nil {
			release()
			return nil, nil, waitEnded(err, errTurnWaited)
		}
		release = then(giveBack, release)
	}
	if a.Shares != nil {
		unclaim, err := a.Shares.Claim(ctx, p, class == Mutation)
		if err != nil {
			release()
			return nil, nil, waitEnded(err, errShareWaited)
		}
		release = then(unclaim, release)
	}
	return ctx, release, nil
}

// then is first followed by next.
func then(first, next func()) func() { return func() { first(); next() } }

var (
	errTurnWaited = apperr.New(apperr.Timeout, "the operation waited past its deadline for its turn to run, which this replica's other operations held: send it again")
	// ErrCancelled answers an operation whose request was cancelled: its
	// client went away, or the server is stopping.
	ErrCancelled   = apperr.New(apperr.Cancelled, "the request was cancelled before it finished; send it again")
	errShareWaited = apperr.New(apperr.Timeout, "the request waited past its deadline for its share of the database, which this key's or tenant's other requests held: send fewer at once")
)

// waitEnded is the error of an operation whose wait ended before it could
// run: timedOut past its deadline, else cancelled.
func waitEnded(err error, timedOut *apperr.Error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return timedOut
	}
	return ErrCancelled
}
