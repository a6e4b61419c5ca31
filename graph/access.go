package graph

import (
	"context"
	"errors"

	"github.com/99designs/gqlgen/graphql"
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

// refuse answers an operation with err alone, before anything runs; a
// refusal for a limit says when to send again (extensions.retryAfter, in
// seconds, which POST and GET also answer as HTTP 429 with Retry-After).
func refuse(err error) graphql.ResponseHandler {
	ae := &apperr.Error{Code: apperr.Internal, Message: "internal error"}
	errors.As(err, &ae)
	extensions := map[string]any{"code": string(ae.Code)}
	if r := (*access.Refusal)(nil); errors.As(err, &r) {
		extensions["retryAfter"] = r.RetryAfterSeconds()
	}
	return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{{Message: ae.Message, Extensions: extensions}}})
}

// authenticateSocket is connection_init's check: the payload's
// Authorization ("Bearer <key>") names the key, or else the upgrade
// request's header did. A bad key closes the socket with 4403, and so does
// the key's revocation while the socket is open (access.Keys.Hold).
func authenticateSocket(keys *access.Keys) func(context.Context, map[string]any) (context.Context, error) {
	return func(ctx context.Context, payload map[string]any) (context.Context, error) {
		p, err := socketPrincipal(ctx, keys, payload)
		if err != nil {
			return nil, err
		}
		held, err := keys.Hold(access.WithPrincipal(ctx, p), p)
		if err != nil {
			return nil, forbidden(err)
		}
		return held, nil
	}
}

// socketPrincipal is the principal of connection_init's key, or of the
// upgrade request's when the payload names none.
func socketPrincipal(ctx context.Context, keys *access.Keys, payload map[string]any) (*access.Principal, error) {
	raw, _ := payload["Authorization"].(string)
	if raw == "" {
		raw, _ = payload["authorization"].(string)
	}
	if raw == "" {
		if p, ok := access.FromContext(ctx); ok {
			return p, nil
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
		return nil, forbidden(err)
	}
	return p, nil
}

// forbidden is the 4403 close for a key that failed its check.
func forbidden(err error) *wsproto.CloseError {
	reason := "Forbidden: the API key is not valid or was revoked"
	if !errors.As(err, new(*apperr.Error)) {
		reason = "Forbidden: the API key could not be checked; try again"
	}
	return &wsproto.CloseError{Code: wsproto.CloseForbidden, Reason: reason}
}
