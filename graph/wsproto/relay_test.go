package wsproto_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"sessiongraph/graph/wsproto"
)

// relayServer serves a subscription whose resolver claims the relay (with
// room for two sources) and hands it to the test; encodes counts the
// responses gqlgen produced.
func relayServer(t *testing.T) (url string, relays <-chan relayed, encodes *atomic.Int64) {
	t.Helper()
	schema := gqlparser.MustLoadSchema(&ast.Source{Input: `
		type Query { name: String }
		type Subscription { name: String }
	`})
	got := make(chan relayed, 4)
	encodes = &atomic.Int64{}
	srv := handler.New(&graphql.ExecutableSchemaMock{
		SchemaFunc: func() *ast.Schema { return schema },
		ExecFunc: func(ctx context.Context) graphql.ResponseHandler {
			relay := wsproto.ClaimRelay(ctx, 2)
			if relay == nil {
				panic("no relay")
			}
			out := make(chan *string, 1)
			got <- relayed{relay, out}
			return func(ctx context.Context) *graphql.Response {
				select {
				case v, ok := <-out:
					if !ok {
						return nil
					}
					encodes.Add(1)
					if v == nil {
						return &graphql.Response{Data: []byte(`{"name":null}`)}
					}
					return &graphql.Response{Data: []byte(`{"name":"` + *v + `"}`)}
				case <-ctx.Done():
					return nil
				}
			}
		},
	})
	srv.AddTransport(&wsproto.Transport{})
	return serveHandler(t, srv), got, encodes
}

type relayed struct {
	*wsproto.Relay
	out chan *string
}

// value is one source's values; shared ones keep their encodings; the
// last closes the channel after its values.
type value struct {
	vals      []*string
	out       chan<- *string
	last      bool
	encodings *sync.Map
}

func (r relayed) value(v string, shared *sync.Map) *value {
	return &value{vals: []*string{&v}, out: r.out, encodings: shared}
}

func (s *value) Next() bool {
	if len(s.vals) == 0 {
		if s.last {
			close(s.out)
		}
		return false
	}
	s.out <- s.vals[0]
	s.vals = s.vals[1:]
	return true
}

func (s *value) Encoded(key string, encode func() (any, bool)) (any, bool) {
	if s.encodings == nil {
		return encode()
	}
	if v, ok := s.encodings.Load(key); ok {
		return v, true
	}
	v, ok := encode()
	if ok {
		s.encodings.Store(key, v)
	}
	return v, ok
}

func TestRelayedSourcesAreEncodedOncePerOperation(t *testing.T) {
	url, relays, encodes := relayServer(t)
	var clients []*client
	var rs []relayed
	for range 2 {
		c := dial(t, url).acked()
		c.send(`{"id":"1","type":"subscribe","payload":{"query":"subscription { name }"}}`)
		clients = append(clients, c)
		rs = append(rs, <-relays)
	}

	// A subscriber's first response is its own.
	first := &sync.Map{}
	for i, r := range rs {
		if !r.Offer(r.value("a", first)) {
			t.Fatalf("offer to subscriber %d refused", i)
		}
		clients[i].expect(`{"id":"1","type":"next","payload":{"data":{"name":"a"}}}`)
	}
	if got := encodes.Load(); got != 2 {
		t.Fatalf("encodes after the first source: %d, want 2", got)
	}

	// Then the same source with the same operation is encoded once.
	second := &sync.Map{}
	for i, r := range rs {
		r.Offer(r.value("b", second))
		clients[i].expect(`{"id":"1","type":"next","payload":{"data":{"name":"b"}}}`)
	}
	if got := encodes.Load(); got != 3 {
		t.Fatalf("encodes after a shared source: %d, want 3", got)
	}

	// A subscriber's own source is its own again.
	rs[0].Offer(rs[0].value("c", nil))
	clients[0].expect(`{"id":"1","type":"next","payload":{"data":{"name":"c"}}}`)
	if got := encodes.Load(); got != 4 {
		t.Fatalf("encodes after an unshared source: %d, want 4", got)
	}
}

func TestRelayEndsWithTheResolversErrorThenCompletes(t *testing.T) {
	url, relays, _ := relayServer(t)
	c := dial(t, url).acked()
	c.send(`{"id":"1","type":"subscribe","payload":{"query":"subscription { name }"}}`)
	r := <-relays

	r.Offer(r.value("a", nil))
	r.End(&value{vals: []*string{nil}, out: r.out, last: true}, errors.New("fell behind"))
	c.expect(`{"id":"1","type":"next","payload":{"data":{"name":"a"}}}`)
	c.expect(`{"id":"1","type":"next","payload":{"errors":[{"message":"fell behind"}],"data":{"name":null}}}`)
	c.expect(`{"id":"1","type":"complete"}`)
}

func TestAnEndedRelayTakesNothingMoreAndCompletes(t *testing.T) {
	url, relays, _ := relayServer(t)
	c := dial(t, url).acked()
	c.send(`{"id":"1","type":"subscribe","payload":{"query":"subscription { name }"}}`)
	r := <-relays

	r.End(&value{out: r.out, last: true}, nil)
	if r.Offer(r.value("late", nil)) {
		t.Fatal("an ended relay took a source")
	}
	c.expect(`{"id":"1","type":"complete"}`)
}
