package wsproto_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"sessiongraph/graph/wsproto"
)

// endableInit is an Init whose connections the test ends, as a revoked
// credential would.
type endableInit struct {
	mu   sync.Mutex
	ends []context.CancelCauseFunc
}

func (e *endableInit) init(ctx context.Context, _ map[string]any) (context.Context, error) {
	ctx, end := context.WithCancelCause(ctx)
	e.mu.Lock()
	e.ends = append(e.ends, end)
	e.mu.Unlock()
	return ctx, nil
}

func (e *endableInit) endAll(cause error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, end := range e.ends {
		end(cause)
	}
}

func TestAnEndedInitContextClosesTheSocketWithItsCause(t *testing.T) {
	var revoked endableInit
	stopped := make(chan struct{})
	_, url := serveAround(t, &wsproto.Transport{Init: revoked.init}, func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		context.AfterFunc(ctx, func() { close(stopped) })
		return next(ctx)
	})
	live := dial(t, url).acked()
	live.send(subscribeName)
	live.sync()
	idle := dial(t, url).acked()

	revoked.endAll(errors.New("the key was revoked"))
	live.expectClose(4403, "Forbidden: the key was revoked")
	idle.expectClose(4403, "Forbidden: the key was revoked")
	select {
	case <-stopped:
	case <-time.After(readTimeout):
		t.Fatal("the subscription went on after its connection ended")
	}
}

func TestACloseErrorCauseChoosesTheCode(t *testing.T) {
	var ended endableInit
	_, url := serve(t, &wsproto.Transport{Init: ended.init})
	c := dial(t, url).acked()
	ended.endAll(&wsproto.CloseError{Code: 4499, Reason: "Session expired"})
	c.expectClose(4499, "Session expired")
}

// Admit refuses a subscription over a cap with an error message for its
// id; the socket and its other operations go on, and a finished operation
// makes room again.
func TestAdmitRefusesAnOperationWithAnErrorMessage(t *testing.T) {
	var mu sync.Mutex
	running := 0
	srv, url := serve(t, &wsproto.Transport{Admit: func(ctx context.Context) (func(), error) {
		mu.Lock()
		defer mu.Unlock()
		if running == 1 {
			return nil, errors.New("one subscription at a time")
		}
		running++
		return func() {
			mu.Lock()
			running--
			mu.Unlock()
		}, nil
	}})
	waitRunning := func(want int, failure string) {
		t.Helper()
		if !waitFor(readTimeout, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return running == want
		}) {
			t.Fatal(failure)
		}
	}
	c := dial(t, url).acked()
	c.send(subscribeName)
	// Each operation is admitted on its own goroutine: the second is sent
	// once the first holds its place, or either could be the one refused.
	waitRunning(1, "the first subscription was never admitted")
	c.send(`{"id":"2","type":"subscribe","payload":{"query":"subscription { name }"}}`)
	c.expect(`{"id":"2","type":"error","payload":[{"message":"one subscription at a time"}]}`)
	srv.SendNextSubscriptionMessage()
	c.expect(`{"id":"1","type":"next","payload":{"data":{"name":"test"}}}`)

	c.send(`{"id":"1","type":"complete"}`)
	waitRunning(0, "a completed operation was not released")
	c.send(`{"id":"3","type":"subscribe","payload":{"query":"subscription { name }"}}`)
	c.sync()
	srv.SendNextSubscriptionMessage()
	c.expect(`{"id":"3","type":"next","payload":{"data":{"name":"test"}}}`)
	c.close()
}
