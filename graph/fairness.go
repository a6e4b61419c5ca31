package graph

import (
	"context"
	"errors"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"sessiongraph/internal/access"
	"sessiongraph/internal/apperr"
)

// admitOnSocket holds every operation a WebSocket carries to its key's and
// tenant's limits (access.Fairness), as HTTP requests are held before they
// reach gqlgen (internal/app): a subscription counts against the rate when
// it starts, a query or mutation also in flight until it is answered. Then
// next (the subscription caps) admits it too.
func admitOnSocket(f *access.Fairness, next func(context.Context) (func(), error)) func(context.Context) (func(), error) {
	return func(ctx context.Context) (func(), error) {
		p, keyed := access.FromContext(ctx)
		if f == nil || !keyed {
			return next(ctx)
		}
		op := graphql.GetOperationContext(ctx).Operation
		release, refused := f.Admit(p, op != nil && op.Operation != ast.Subscription)
		if refused != nil {
			return nil, refused.Err
		}
		then, err := next(ctx)
		if err != nil {
			release()
			return nil, err
		}
		return func() { then(); release() }, nil
	}
}

// claimPoolShare runs each query and mutation of a key within its key's,
// its tenant's and (for a query) the reads' share of the database pool
// (access.PoolShares): over it, the operation waits for its turn without a
// connection, up to its deadline. Subscriptions hold no connection while
// they wait for events and claim nothing.
func claimPoolShare(shares *access.PoolShares) graphql.OperationMiddleware {
	return func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		op := graphql.GetOperationContext(ctx).Operation
		p, keyed := access.FromContext(ctx)
		if shares == nil || !keyed || op == nil || op.Operation == ast.Subscription {
			return next(ctx)
		}
		release, err := shares.Claim(ctx, p, op.Operation == ast.Mutation)
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			return refuse(apperr.New(apperr.Timeout, "the request waited past its deadline for its share of the database, which this key's or tenant's other requests held: send fewer at once"))
		case err != nil:
			return refuse(errCancelled)
		}
		context.AfterFunc(ctx, release) // should the answer never be asked for
		answer := next(ctx)
		return func(ctx context.Context) *graphql.Response {
			defer release() // a query or mutation has one answer
			return answer(ctx)
		}
	}
}
