package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"sessiongraph/internal/access"
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
