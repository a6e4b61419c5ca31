package graph

import (
	"context"
	"errors"
	"log/slog"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"sessiongraph/internal/access"
	"sessiongraph/internal/apperr"
)

// operationDoor is what admit needs: the admission, the keys to recheck,
// the subscription caps, the operation metrics (nil counts none) and the
// server's error presenter, for a subscription's end reason.
type operationDoor struct {
	admission     *access.Admission
	keys          *access.Keys
	subscriptions *subscriptionCounts
	metrics       *Metrics
	present       graphql.ErrorPresenterFunc
	log           *slog.Logger
}

// admit is the door of every GraphQL operation, over every transport (POST,
// GET, SSE, WebSocket): it runs once the operation is parsed, so that a
// subscription is known by what it is. It refuses an operation without a
// key, and on a long-lived connection one whose key was revoked since the
// connection opened; then access.Admission admits it (role, rate, in
// flight, slot, pool share, deadline), and a subscription outside a
// WebSocket (which counts its own, to refuse with an error message) is
// counted against the subscription caps while it lasts. It counts what it
// admitted in the metrics once answered. Tenant confinement happens below,
// in the ent interceptors.
func admit(d operationDoor) graphql.OperationMiddleware {
	return func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		p, ok := access.FromContext(ctx)
		if !ok {
			return refuse(access.ErrUnauthenticated)
		}
		if access.Held(ctx) {
			if err := recheck(ctx, d.keys, p, d.log); err != nil {
				return refuse(err)
			}
		}
		rc := graphql.GetOperationContext(ctx)
		class := classOf(rc.Operation.Operation)
		run, release, err := d.admission.Admit(ctx, p, class, "this mutation")
		if err != nil {
			return refuse(err)
		}
		if class == access.Subscription {
			return d.subscribe(ctx, next, rc, release)
		}
		// Should the answer never be asked for; stopped when it is, so that
		// the end of ctx starts no goroutine to run it.
		stop := context.AfterFunc(ctx, release)
		deadline, timed := run.Deadline()
		answer := next(ctx)
		return func(ctx context.Context) *graphql.Response {
			defer func() { stop(); release() }() // a query or mutation has one answer
			// gqlgen executes with the context it asks for the answer with,
			// not the one given here: the deadline goes on that one.
			if timed {
				var cancel context.CancelFunc
				ctx, cancel = context.WithDeadline(ctx, deadline)
				defer cancel()
			}
			// A query's fields batch their reads (batch.go); a mutation's
			// root fields run one after another, and a batch read for the
			// first would answer the next with what it changed.
			if class == access.Query {
				ctx = withAnswerBatches(ctx)
			}
			res := answer(ctx)
			d.metrics.count(rc, res)
			return res
		}
	}
}

// subscribe starts an admitted subscription: counted against the caps
// (outside a WebSocket) until its request ends, counted in the metrics at
// its first response, with a place for why it ended (live.go), which the
// response after its end carries.
func (d operationDoor) subscribe(ctx context.Context, next graphql.OperationHandler, rc *graphql.OperationContext, release func()) graphql.ResponseHandler {
	release()
	if ctx.Value(socketKey{}) == nil {
		uncount, err := d.subscriptions.admit(ctx)
		if err != nil {
			return refuse(err)
		}
		context.AfterFunc(ctx, uncount)
	}
	reason := &endReason{}
	responses := next(context.WithValue(ctx, endReasonKey{}, reason))
	counted := false
	return func(ctx context.Context) *graphql.Response {
		res := responses(ctx)
		if err := reason.take(); err != nil && res != nil {
			res.Errors = append(res.Errors, d.present(ctx, err))
		}
		if !counted {
			counted = true
			d.metrics.count(rc, res)
		}
		return res
	}
}

// recheck asks the database whether a connection's key is still valid: it
// was checked when the connection opened, and this replica may not have
// heard of a revocation yet, so no operation runs once the revocation has
// committed (one statement each).
func recheck(ctx context.Context, keys *access.Keys, p *access.Principal, log *slog.Logger) error {
	err := keys.Recheck(ctx, p.KeyID)
	switch {
	case err == nil || errors.As(err, new(*apperr.Error)):
		return err
	case ctx.Err() != nil: // the client went away meanwhile
		return errCancelled
	}
	log.ErrorContext(ctx, "checking a connection's API key", "error", err)
	return apperr.New(apperr.Internal, "the API key could not be checked right now; try again")
}

// classOf is the admission class of a parsed operation.
func classOf(op ast.Operation) access.Class {
	switch op {
	case ast.Mutation:
		return access.Mutation
	case ast.Subscription:
		return access.Subscription
	}
	return access.Query
}
