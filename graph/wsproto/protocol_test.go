package wsproto_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"sessiongraph/graph/wsproto"
)

const subscribeName = `{"id":"1","type":"subscribe","payload":{"query":"subscription { name }"}}`

func TestInitIsAcknowledged(t *testing.T) {
	_, url := serve(t, &wsproto.Transport{})
	c := dial(t, url)
	c.send(`{"type":"connection_init","payload":{"token":"t"}}`)
	c.expect(`{"type":"connection_ack"}`)
	c.close()
}

func TestNoInitWithinTimeoutCloses4408(t *testing.T) {
	_, url := serve(t, &wsproto.Transport{InitTimeout: 100 * time.Millisecond})
	c := dial(t, url)
	c.expectClose(4408, "Connection initialisation timeout")
}

func TestSecondInitCloses4429(t *testing.T) {
	_, url := serve(t, &wsproto.Transport{})
	c := dial(t, url).acked()
	c.send(`{"type":"connection_init"}`)
	c.expectClose(4429, "Too many initialisation requests")
}

func TestSubscribeBeforeAckCloses4401(t *testing.T) {
	_, url := serve(t, &wsproto.Transport{})
	c := dial(t, url)
	c.send(subscribeName)
	c.expectClose(4401, "Unauthorized")
}

func TestSubscribeWithActiveIDCloses4409(t *testing.T) {
	_, url := serve(t, &wsproto.Transport{})
	c := dial(t, url).acked()
	c.send(subscribeName)
	c.send(subscribeName)
	c.expectClose(4409, "Subscriber for 1 already exists")
}

func TestInvalidMessagesClose4400(t *testing.T) {
	for _, tc := range []struct{ name, msg, reason string }{
		{"bad JSON", `{"type":`, "Invalid message: not a JSON object"},
		{"not an object", `["connection_init"]`, "Invalid message: not a JSON object"},
		{"no type", `{"id":"1"}`, `Invalid message: "type" must be a non-empty string`},
		{"unknown type", `{"type":"start","id":"1"}`, `Invalid message: unexpected type "start"`},
		{"server-only type", `{"type":"next","id":"1"}`, `Invalid message: unexpected type "next"`},
		{"subscribe without id", `{"type":"subscribe","payload":{"query":"{ name }"}}`, `Invalid message: "subscribe" needs a non-empty "id"`},
		{"complete without id", `{"type":"complete"}`, `Invalid message: "complete" needs a non-empty "id"`},
		{"numeric id", `{"type":"complete","id":1}`, `Invalid message: "id" must be a string`},
		{"init payload not an object", `{"type":"connection_init","payload":"token"}`, `Invalid message: "connection_init" payload must be an object`},
		{"subscribe without query", `{"type":"subscribe","id":"1","payload":{}}`, `Invalid message: "subscribe" payload must be {query, operationName?, variables?, extensions?}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, url := serve(t, &wsproto.Transport{})
			c := dial(t, url)
			if strings.Contains(tc.name, "subscribe without query") {
				c.acked()
			}
			c.send(tc.msg)
			c.expectClose(4400, tc.reason)
		})
	}
}

func TestPingIsAnsweredWithPong(t *testing.T) {
	_, url := serve(t, &wsproto.Transport{})
	c := dial(t, url)
	// Ping is allowed before connection_init.
	c.send(`{"type":"ping"}`)
	c.expect(`{"type":"pong"}`)
	c.acked()
	c.send(`{"type":"ping","payload":{"at":1}}`)
	c.expect(`{"type":"pong","payload":{"at":1}}`)
	c.send(`{"type":"pong"}`) // an unsolicited pong needs no answer
	c.sync()
}

func TestServerPingsEveryInterval(t *testing.T) {
	_, url := serve(t, &wsproto.Transport{PingInterval: 50 * time.Millisecond})
	c := dial(t, url).acked()
	c.expect(`{"type":"ping"}`)
	c.expect(`{"type":"ping"}`)
	c.send(`{"type":"pong"}`)
}

func TestSubscriptionSendsNextUntilComplete(t *testing.T) {
	srv, url := serve(t, &wsproto.Transport{})
	c := dial(t, url).acked()
	c.send(subscribeName)
	c.sync()
	srv.SendNextSubscriptionMessage()
	c.expect(`{"id":"1","type":"next","payload":{"data":{"name":"test"}}}`)
	srv.SendNextSubscriptionMessage()
	c.expect(`{"id":"1","type":"next","payload":{"data":{"name":"test"}}}`)
	srv.SendCompleteSubscriptionMessage()
	c.expect(`{"id":"1","type":"complete"}`)

	// A finished operation frees its id.
	c.send(subscribeName)
	c.sync()
	srv.SendNextSubscriptionMessage()
	c.expect(`{"id":"1","type":"next","payload":{"data":{"name":"test"}}}`)
	c.close()
}

func TestClientCompleteStopsTheOperation(t *testing.T) {
	stopped := make(chan struct{})
	srv, url := serveAround(t, &wsproto.Transport{}, func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		context.AfterFunc(ctx, func() { close(stopped) })
		return next(ctx)
	})
	c := dial(t, url).acked()
	c.send(subscribeName)
	c.sync()
	srv.SendNextSubscriptionMessage()
	c.expect(`{"id":"1","type":"next","payload":{"data":{"name":"test"}}}`)

	c.send(`{"id":"1","type":"complete"}`)
	select {
	case <-stopped:
	case <-time.After(readTimeout):
		t.Fatal("the operation's context was not cancelled by the client's complete")
	}
	// The server sends nothing more for id 1, not even complete.
	c.sync()
	c.close()
}

func TestQueryAndMutationAnswerOnceThenComplete(t *testing.T) {
	_, url := serve(t, &wsproto.Transport{})
	c := dial(t, url).acked()
	c.send(`{"id":"q","type":"subscribe","payload":{"query":"query { name }"}}`)
	c.expect(`{"id":"q","type":"next","payload":{"data":{"name":"test"}}}`)
	c.expect(`{"id":"q","type":"complete"}`)

	// An error while executing is a result, not an error message.
	c.send(`{"id":"m","type":"subscribe","payload":{"query":"mutation { name }"}}`)
	c.expect(`{"id":"m","type":"next","payload":{"errors":[{"message":"mutations are not supported"}],"data":null}}`)
	c.expect(`{"id":"m","type":"complete"}`)
	c.close()
}

func TestInvalidQueryGetsErrorWithoutComplete(t *testing.T) {
	_, url := serve(t, &wsproto.Transport{})
	c := dial(t, url).acked()
	c.send(`{"id":"v","type":"subscribe","payload":{"query":"subscription { nope }"}}`)
	c.expect(`{"id":"v","type":"error","payload":[{"message":"Cannot query field \"nope\" on type \"Subscription\". Did you mean \"name\"?","locations":[{"line":1,"column":16}],"extensions":{"code":"GRAPHQL_VALIDATION_FAILED"}}]}`)
	c.send(`{"id":"p","type":"subscribe","payload":{"query":"subscription {"}}`)
	c.expect(`{"id":"p","type":"error","payload":[{"message":"Expected Name, found \u003cEOF\u003e","locations":[{"line":1,"column":15}],"extensions":{"code":"GRAPHQL_PARSE_FAILED"}}]}`)
	// No complete follows an error; the id is free again.
	c.sync()
	c.send(`{"id":"v","type":"subscribe","payload":{"query":"query { name }"}}`)
	c.expect(`{"id":"v","type":"next","payload":{"data":{"name":"test"}}}`)
	c.expect(`{"id":"v","type":"complete"}`)
}

type tokenKey struct{}

func TestInitContextReachesOperations(t *testing.T) {
	tokens := make(chan any, 1)
	_, url := serveAround(t, &wsproto.Transport{
		Init: func(ctx context.Context, payload map[string]any) (context.Context, error) {
			return context.WithValue(ctx, tokenKey{}, payload["token"]), nil
		},
	}, func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		tokens <- ctx.Value(tokenKey{})
		return next(ctx)
	})
	c := dial(t, url)
	c.send(`{"type":"connection_init","payload":{"token":"s3cret"}}`)
	c.expect(`{"type":"connection_ack"}`)
	c.send(`{"id":"q","type":"subscribe","payload":{"query":"{ name }"}}`)
	c.expect(`{"id":"q","type":"next","payload":{"data":{"name":"test"}}}`)
	c.expect(`{"id":"q","type":"complete"}`)
	if got := <-tokens; got != "s3cret" {
		t.Fatalf("operation saw token %v, want s3cret", got)
	}
}

func TestInitErrorCloses4403(t *testing.T) {
	_, url := serve(t, &wsproto.Transport{
		Init: func(ctx context.Context, payload map[string]any) (context.Context, error) {
			return nil, errors.New("no token")
		},
	})
	c := dial(t, url)
	c.send(`{"type":"connection_init"}`)
	c.expectClose(4403, "Forbidden")
}

func TestInitCloseErrorChoosesTheCode(t *testing.T) {
	_, url := serve(t, &wsproto.Transport{
		Init: func(ctx context.Context, payload map[string]any) (context.Context, error) {
			return nil, &wsproto.CloseError{Code: 4499, Reason: "Session expired"}
		},
	})
	c := dial(t, url)
	c.send(`{"type":"connection_init"}`)
	c.expectClose(4499, "Session expired")
}

func TestSupportsOnlyGraphQLTransportWSUpgrades(t *testing.T) {
	tr := &wsproto.Transport{}
	for _, tc := range []struct {
		name     string
		method   string
		upgrade  string
		protocol string
		want     bool
	}{
		{"graphql-transport-ws", http.MethodGet, "websocket", "graphql-transport-ws", true},
		{"offered among others", http.MethodGet, "WebSocket", "graphql-ws, graphql-transport-ws", true},
		{"legacy graphql-ws only", http.MethodGet, "websocket", "graphql-ws", false},
		{"no subprotocol", http.MethodGet, "websocket", "", false},
		{"no upgrade", http.MethodGet, "", "graphql-transport-ws", false},
		{"POST", http.MethodPost, "websocket", "graphql-transport-ws", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, "/query", nil)
			if tc.upgrade != "" {
				r.Header.Set("Upgrade", tc.upgrade)
			}
			if tc.protocol != "" {
				r.Header.Set("Sec-WebSocket-Protocol", tc.protocol)
			}
			if got := tr.Supports(r); got != tc.want {
				t.Fatalf("Supports = %v, want %v", got, tc.want)
			}
		})
	}
}
