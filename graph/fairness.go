package graph

import (
	"context"
	"errors"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"sessiongraph/internal/access"
	"sessiongraph/internal/apperr"
)

// admitOnSocket holds every operation a WebSocket carries to its key's and
// tenant's limits (access.Fairness), as HTTP requests are held before they
// reach gqlgen (internal/app): a subscription counts against the rate when
// it starts, a query or mutation also in flight until it is answered
// (waiting for its tokens when it comes a little early), and it runs once
// it has its slot (access.Slots), waiting its key's turn for
// one, at most its class's timeout; a mutation, received whole, waits
// whatever its socket does, as it then runs. Then next (the subscription
// caps) admits it too.
func admitOnSocket(f *access.Fairness, slots *access.Slots, queryTimeout, mutationTimeout time.Duration,
	next func(context.Context) (func(), error)) func(context.Context) (func(), error) {
	return func(ctx context.Context) (func(), error) {
		p, keyed := access.FromContext(ctx)
		if f == nil || !keyed {
			return next(ctx)
		}
		op := graphql.GetOperationContext(ctx).Operation
		operation := op != nil && op.Operation != ast.Subscription
		release, wait, refused := f.Admit(p, operation)
		if refused != nil {
			return nil, refused.Err
		}
		waitCtx, timeout := ctx, queryTimeout
		if op != nil && op.Operation == ast.Mutation {
			waitCtx, timeout = context.WithoutCancel(ctx), mutationTimeout
		}
		if timeout > 0 {
			var cancel context.CancelFunc
			waitCtx, cancel = context.WithTimeout(waitCtx, timeout)
			defer cancel()
		}
		if err := access.Delay(waitCtx, wait); err != nil {
			release()
			return nil, waitEnded(err)
		}
		if operation && slots != nil {
			giveBack, err := slots.Take(waitCtx, p)
			if err != nil {
				release()
				return nil, waitEnded(err)
			}
			then := release
			release = func() { giveBack(); then() }
		}
		then, err := next(ctx)
		if err != nil {
			release()
			return nil, err
		}
		return func() { then(); release() }, nil
	}
}

// waitEnded is the error of an operation whose wait for its tokens or its
// slot ended before it could run.
func waitEnded(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return apperr.New(apperr.Timeout, "the operation waited past its deadline for its turn to run, which this replica's other operations held: send it again")
	}
	return errCancelled
}

// claimPoolShare runs each query and mutation of a key within its class's
// deadline (a query, a search among them, gives up sooner than a write)
// and its key's, its tenant's and (for a query) the reads' share of the
// database pool (access.PoolShares): over its share, the operation waits
// for its turn without a connection, up to that deadline. The deadline
// cancels the operation's statements with it, and answers TIMEOUT.
// Subscriptions hold no connection while they wait for events and claim
// nothing.
func claimPoolShare(shares *access.PoolShares, queryTimeout, mutationTimeout time.Duration) graphql.OperationMiddleware {
	return func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		op := graphql.GetOperationContext(ctx).Operation
		if op == nil || op.Operation == ast.Subscription {
			return next(ctx)
		}
		write := op.Operation == ast.Mutation
		timeout := queryTimeout
		if write {
			timeout = mutationTimeout
		}
		var deadline time.Time
		if timeout > 0 {
			deadline = time.Now().Add(timeout)
		}
		release := func() {}
		if p, keyed := access.FromContext(ctx); keyed && shares != nil {
			var err error
			release, err = shares.ClaimUntil(ctx, deadline, p, write)
			switch {
			case errors.Is(err, context.DeadlineExceeded):
				return refuse(apperr.New(apperr.Timeout, "the request waited past its deadline for its share of the database, which this key's or tenant's other requests held: send fewer at once"))
			case err != nil:
				return refuse(errCancelled)
			}
			// Should the answer never be asked for; stopped when it is, so
			// that the end of ctx starts no goroutine to run it.
			stop, claimed := context.AfterFunc(ctx, release), release
			release = func() { stop(); claimed() }
		}
		// gqlgen executes with the context it asks for the answer with, not
		// the one given here: the deadline goes on that one.
		answer := next(ctx)
		return func(ctx context.Context) *graphql.Response {
			defer release() // a query or mutation has one answer
			ctx, cancel := withDeadline(ctx, deadline)
			defer cancel()
			return answer(ctx)
		}
	}
}

// withDeadline is ctx with the deadline, or ctx as it is for a zero one.
func withDeadline(ctx context.Context, deadline time.Time) (context.Context, context.CancelFunc) {
	if deadline.IsZero() {
		return ctx, func() {}
	}
	return context.WithDeadline(ctx, deadline)
}
