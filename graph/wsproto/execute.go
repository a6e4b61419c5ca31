package wsproto

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// execute runs operation id and sends its results: a next per response and a
// complete at the end, or a lone error when the request is rejected before it
// runs. After the client's complete (ctx ended) it sends nothing more.
func (c *connection) execute(ctx context.Context, id string, op *operation, params *graphql.RawParams) {
	ctx = graphql.StartOperationTrace(ctx)
	opCtx, errs := c.exec.CreateOperationContext(ctx, params)
	if errs != nil {
		resp := c.exec.DispatchError(graphql.WithOperationContext(ctx, opCtx), errs)
		// As graphql-ws does: a request that does not parse or validate gets an
		// error message, which ends the operation without complete; other
		// request errors (variables, operation name) are a result like any other.
		if errcode.GetErrorKind(errs) == errcode.KindProtocol {
			c.sendLast(ctx, id, op, errorMessage(id, resp.Errors))
			return
		}
		if c.sendNext(ctx, id, resp) {
			c.sendLast(ctx, id, op, message{ID: id, Type: typeComplete})
		}
		return
	}

	ctx = graphql.WithOperationContext(ctx, opCtx)
	if c.t.Admit != nil {
		release, err := c.t.Admit(ctx)
		if err != nil {
			resp := c.exec.DispatchError(ctx, gqlerror.List{{Message: err.Error(), Err: err}})
			c.sendLast(ctx, id, op, errorMessage(id, resp.Errors))
			return
		}
		defer release()
	}
	defer func() {
		if r := recover(); r != nil {
			c.sendLast(ctx, id, op, errorMessage(id, gqlerror.List{asGQLError(opCtx.Recover(ctx, r))}))
		}
	}()

	// A mutation runs detached from the socket (MutationTimeout); ctx still
	// decides what is sent.
	detached := c.t.MutationTimeout > 0 && opCtx.Operation.Operation == ast.Mutation
	run := ctx
	if detached {
		var cancel context.CancelFunc
		run, cancel = context.WithTimeout(context.WithoutCancel(ctx), c.t.MutationTimeout)
		defer cancel()
	}
	relay := newRelay(opCtx)
	responses, run := c.exec.DispatchOperation(context.WithValue(run, relayKey{}, relay), opCtx)
	if detached {
		if resp := responses(run); resp != nil && c.sendNext(ctx, id, resp) {
			c.sendLast(ctx, id, op, message{ID: id, Type: typeComplete})
		}
		return
	}
	ctx = run
	if relay.isClaimed() {
		c.relayLoop(ctx, id, op, relay, responses)
		return
	}
	for {
		resp := responses(ctx)
		if resp == nil {
			break
		}
		if !c.sendNext(ctx, id, resp) {
			return // completed by the client, or the socket is gone
		}
	}
	c.sendLast(ctx, id, op, message{ID: id, Type: typeComplete})
}

// sendLast frees id before it sends the message that ends the operation,
// because a client may reuse the id as soon as it has that message.
func (c *connection) sendLast(ctx context.Context, id string, op *operation, m message) {
	c.release(id, op)
	c.send(ctx, m)
}

func (c *connection) sendNext(ctx context.Context, id string, resp *graphql.Response) bool {
	return c.write(ctx, nextMessage(id, responsePayload(resp)))
}

func errorMessage(id string, errs gqlerror.List) message {
	payload, err := json.Marshal(errs)
	if err != nil {
		panic(fmt.Sprintf("wsproto: encode errors: %v", err))
	}
	return message{ID: id, Type: typeError, Payload: payload}
}

func asGQLError(err error) *gqlerror.Error {
	var gqlErr *gqlerror.Error
	if errors.As(err, &gqlErr) {
		return gqlErr
	}
	if err == nil {
		return &gqlerror.Error{Message: "internal system error"}
	}
	return &gqlerror.Error{Message: err.Error()}
}
