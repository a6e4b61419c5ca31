package wsproto_test

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/coder/websocket"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"sessiongraph/graph/wsproto"
)

func TestConnectionsLeaveNoGoroutinesBehind(t *testing.T) {
	const connections = 200
	running := make(chan struct{}, connections)
	_, url := serveAround(t, &wsproto.Transport{PingInterval: time.Second}, func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		running <- struct{}{}
		return next(ctx)
	})
	before := runtime.NumGoroutine()

	clients := make([]*client, connections)
	for i := range clients {
		clients[i] = dial(t, url).acked()
		clients[i].send(subscribeName)
	}
	for range connections {
		select {
		case <-running:
		case <-time.After(readTimeout):
			t.Fatal("not every subscription started")
		}
	}
	// Each open connection holds at least its read loop and its operation;
	// anything less means the test is not measuring what it closes.
	if got := runtime.NumGoroutine(); got < before+connections {
		t.Fatalf("%d goroutines with %d open subscriptions: the test is not measuring them", got, connections)
	}
	for _, c := range clients {
		c.close()
	}
	settleGoroutines(t, before)
}

// flood is what floodServer tells of its subscription: produced holds a
// token once a result has been made, and ended is closed
// once the subscription's context has ended (its client was dropped).
type flood struct {
	produced chan struct{}
	ended    chan struct{}
}

// floodServer serves a subscription that sends 64 KiB results as fast as the
// socket takes them, and a query that answers at once.
func floodServer(t *testing.T, tr *wsproto.Transport) (string, *flood) {
	t.Helper()
	f := &flood{produced: make(chan struct{}, 1), ended: make(chan struct{})}
	schema := gqlparser.MustLoadSchema(&ast.Source{Input: `
		type Query { name: String! }
		type Subscription { flood: String! }
	`})
	big := json.RawMessage(`{"flood":"` + strings.Repeat("x", 64<<10) + `"}`)
	srv := handler.New(&graphql.ExecutableSchemaMock{
		ExecFunc: func(ctx context.Context) graphql.ResponseHandler {
			if graphql.GetOperationContext(ctx).Operation.Operation == ast.Subscription {
				context.AfterFunc(ctx, func() { close(f.ended) })
				return func(context.Context) *graphql.Response {
					if ctx.Err() != nil {
						return nil
					}
					select {
					case f.produced <- struct{}{}:
					default:
					}
					return &graphql.Response{Data: big}
				}
			}
			return graphql.OneShot(&graphql.Response{Data: json.RawMessage(`{"name":"test"}`)})
		},
		SchemaFunc: func() *ast.Schema { return schema },
		ComplexityFunc: func(context.Context, string, string, int, map[string]any) (int, bool) {
			return 0, false
		},
	})
	srv.AddTransport(tr)
	return serveHandler(t, srv), f
}

func TestSlowClientHoldsUpOnlyItself(t *testing.T) {
	url, flood := floodServer(t, &wsproto.Transport{WriteTimeout: time.Second})
	before := runtime.NumGoroutine()

	slow := dial(t, url).acked()
	slow.send(`{"id":"f","type":"subscribe","payload":{"query":"subscription { flood }"}}`)
	// slow never reads: once the flood is under way, its results fill the
	// socket buffers and the server's next write to it waits.
	select {
	case <-flood.produced:
	case <-time.After(readTimeout):
		t.Fatal("the flood never started")
	}

	fast := dial(t, url).acked()
	fast.send(`{"id":"q","type":"subscribe","payload":{"query":"{ name }"}}`)
	fast.expect(`{"id":"q","type":"next","payload":{"data":{"name":"test"}}}`)
	fast.expect(`{"id":"q","type":"complete"}`)
	select {
	case <-flood.ended:
		t.Fatal("a query on another connection was answered only once the slow client was dropped")
	default: // answered while the server still waited on the slow client
	}
	fast.close()

	// The server gives up on the slow client after WriteTimeout: draining what
	// the buffers hold then ends in a dropped socket, not a close frame.
	select {
	case <-flood.ended:
	case <-time.After(15 * time.Second):
		t.Fatal("the server kept writing to a client that did not read")
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		_, err := slow.read()
		if err != nil {
			if ce := (websocket.CloseError{}); errors.As(err, &ce) {
				t.Fatalf("slow client got close frame %v, want the socket dropped", ce)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server kept writing to a client that did not read")
		}
	}
	_ = slow.ws.CloseNow()
	settleGoroutines(t, before)
}
