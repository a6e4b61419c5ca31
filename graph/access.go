package graph

import (
	"context"
	"errors"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"sessiongraph/graph/wsproto"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apperr"
)

// adminOnly implements @admin: the field runs only for an ADMIN key.
func adminOnly(ctx context.Context, _ any, next graphql.Resolver) (any, error) {
	field := "this field"
	if fc := graphql.GetFieldContext(ctx); fc != nil {
		field = fc.Field.Name
	}
	if err := access.RequireAdmin(ctx, field); err != nil {
		return nil, err
	}
	return next(ctx)
}

// authorizeOperation refuses an operation before any resolver runs when its
// key may not run it: no key at all, or a READER key and a mutation. Tenant
// confinement happens below, in the ent interceptors.
func authorizeOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	p, ok := access.FromContext(ctx)
	var err *apperr.Error
	switch {
	case !ok:
		err = access.ErrUnauthenticated
	case !p.CanWrite() && graphql.GetOperationContext(ctx).Operation.Operation == ast.Mutation:
		err = apperr.New(apperr.Forbidden, "this key is a READER key: it may query and subscribe, not run mutations")
	}
	if err != nil {
		return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{{
			Message: err.Message, Extensions: map[string]any{"code": string(err.Code)},
		}}})
	}
	return next(ctx)
}

// authenticateSocket is connection_init's check: the payload's
// Authorization ("Bearer <key>") names the key, or else the upgrade
// request's header did. A bad key closes the socket with 4403.
func authenticateSocket(keys *access.Keys) func(context.Context, map[string]any) (context.Context, error) {
	return func(ctx context.Context, payload map[string]any) (context.Context, error) {
		raw, _ := payload["Authorization"].(string)
		if raw == "" {
			raw, _ = payload["authorization"].(string)
		}
		if raw == "" {
			if _, ok := access.FromContext(ctx); ok {
				return ctx, nil
			}
			return nil, &wsproto.CloseError{Code: wsproto.CloseForbidden,
				Reason: `Forbidden: send {"Authorization": "Bearer <key>"} in connection_init`}
		}
		key, ok := access.BearerKey(raw)
		if !ok {
			return nil, &wsproto.CloseError{Code: wsproto.CloseForbidden,
				Reason: `Forbidden: Authorization must read "Bearer <key>"`}
		}
		p, err := keys.Authenticate(ctx, key)
		if err != nil {
			reason := "Forbidden: the API key is not valid or was revoked"
			if !errors.As(err, new(*apperr.Error)) {
				reason = "Forbidden: the API key could not be checked; try again"
			}
			return nil, &wsproto.CloseError{Code: wsproto.CloseForbidden, Reason: reason}
		}
		return access.WithPrincipal(ctx, p), nil
	}
}
