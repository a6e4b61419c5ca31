package wsproto

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// A Relay carries a subscription's values from its resolver to the socket
// one source (such as an event) at a time, instead of gqlgen reading them
// from the resolver's channel whenever they come. The transport then puts a
// source's values on the channel itself, just before it reads their
// responses, and so knows which source a response encodes: when every
// subscriber sees the same source, the subscribers whose operations are the
// same (query, operation name, variables) share one encoding of it, and
// gqlgen executes the selection once per source rather than once per subscriber.
type Relay struct {
	key      string // the operation, for sharing encodings; "" shares none
	capacity int

	mu      sync.Mutex
	claimed bool
	queue   []Source
	end     Source
	endErr  error
	ended   bool
	wake    chan struct{} // there are sources, or the end, to take
	room    chan struct{} // the transport took what was queued
}

// Source is one source's values, relayed.
type Source interface {
	// Next puts the source's next value on the resolver's channel, without
	// blocking, and reports whether there was one.
	Next() bool
	// Encoded returns what encode makes of the source for key. A source
	// other subscribers see too may return what encode made for one of
	// them; one of this subscriber's alone calls encode. encode reports
	// false when the operation ended meanwhile, and is then not kept.
	Encoded(key string, encode func() (any, bool)) (any, bool)
}

type relayKey struct{}

// ClaimRelay returns the relay of the WebSocket subscription ctx belongs to,
// which then holds up to capacity sources the socket has not taken; nil when
// the operation was not served by this transport or its relay is claimed
// already. A resolver claims it while it is called and then sends it all its
// values, never through its channel: the transport feeds the channel.
func ClaimRelay(ctx context.Context, capacity int) *Relay {
	r, _ := ctx.Value(relayKey{}).(*Relay)
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.claimed {
		return nil
	}
	r.claimed, r.capacity = true, capacity
	return r
}

func newRelay(opCtx *graphql.OperationContext) *Relay {
	r := &Relay{wake: make(chan struct{}, 1), room: make(chan struct{}, 1)}
	// Map keys come out sorted. Variables that do not encode leave the key
	// empty, and the operation shares nothing.
	if vars, err := json.Marshal(opCtx.Variables); err == nil {
		r.key = opCtx.RawQuery + "\x00" + opCtx.OperationName + "\x00" + string(vars)
	}
	return r
}

func (r *Relay) isClaimed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.claimed
}

// Offer queues s unless capacity sources are queued already; it never blocks.
func (r *Relay) Offer(s Source) bool {
	r.mu.Lock()
	if r.ended || len(r.queue) >= r.capacity {
		r.mu.Unlock()
		return false
	}
	r.queue = append(r.queue, s)
	r.mu.Unlock()
	signal(r.wake)
	return true
}

// Send queues s, waiting while capacity sources are queued; false when ctx ended first.
func (r *Relay) Send(ctx context.Context, s Source) bool {
	for {
		r.mu.Lock()
		if r.ended {
			r.mu.Unlock()
			return false
		}
		if len(r.queue) < r.capacity {
			r.queue = append(r.queue, s)
			r.mu.Unlock()
			signal(r.wake)
			return true
		}
		r.mu.Unlock()
		select {
		case <-r.room:
		case <-ctx.Done():
			return false
		}
	}
}

// End queues the last source, whose values go out after every other's,
// and err (when not nil) with them, presented as a resolver error; the
// resolver's channel must then be closed by s's Next, and the operation
// completes. It never blocks, and nothing may be sent after it.
func (r *Relay) End(s Source, err error) {
	r.mu.Lock()
	r.end, r.endErr, r.ended = s, err, true
	r.mu.Unlock()
	signal(r.wake)
}

// take empties the queue; end is not nil once the resolver has ended.
func (r *Relay) take() (sources []Source, end Source, endErr error) {
	r.mu.Lock()
	sources, r.queue = r.queue, nil
	end, endErr = r.end, r.endErr
	r.mu.Unlock()
	signal(r.room)
	return sources, end, endErr
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// relayLoop sends the responses of the relayed sources until the resolver
// ends (then completes) or ctx does (then sends nothing more).
func (c *connection) relayLoop(ctx context.Context, id string, op *operation, r *Relay, responses graphql.ResponseHandler) {
	// Each subscriber's first response is its own, not a shared one: gqlgen
	// extensions (the metrics) see a subscription start at its first response.
	shared := false
	shareable := r.key != ""
	for {
		select {
		case <-r.wake:
		case <-ctx.Done():
			return
		}
		sources, end, endErr := r.take()
		for _, s := range sources {
			payloads, ok := c.encode(ctx, r.key, s, responses, shared)
			if !ok {
				c.finishRelayed(ctx, id, op, responses)
				return
			}
			if !c.sendPayloads(ctx, id, payloads) {
				return
			}
			shared = shareable
		}
		if end == nil {
			continue
		}
		var resps []*graphql.Response
		for end.Next() {
			resp := responses(ctx)
			if resp == nil {
				break
			}
			resps = append(resps, resp)
		}
		if endErr != nil {
			// The resolver's error goes with its last value (a null, say),
			// so that the client learns why the subscription ends.
			errs := c.exec.DispatchError(ctx, gqlerror.List{{Message: endErr.Error(), Err: endErr}}).Errors
			if len(resps) == 0 {
				resps = append(resps, &graphql.Response{})
			}
			last := resps[len(resps)-1]
			last.Errors = append(last.Errors, errs...)
		}
		for _, resp := range resps {
			if !c.sendNext(ctx, id, resp) {
				return
			}
		}
		c.finishRelayed(ctx, id, op, responses)
		return
	}
}

// encode puts s's values on the resolver's channel and encodes their
// responses, or takes another subscriber's encoding of s when shared. It
// reports false when gqlgen ended the stream first.
func (c *connection) encode(ctx context.Context, key string, s Source, responses graphql.ResponseHandler, shared bool) ([][]byte, bool) {
	encode := func() (any, bool) {
		var payloads [][]byte
		for s.Next() {
			resp := responses(ctx)
			if resp == nil {
				return nil, false
			}
			payloads = append(payloads, responsePayload(resp))
		}
		return payloads, true
	}
	var v any
	var ok bool
	if shared {
		v, ok = s.Encoded(key, encode)
	} else {
		v, ok = encode()
	}
	payloads, _ := v.([][]byte)
	return payloads, ok
}

func (c *connection) sendPayloads(ctx context.Context, id string, payloads [][]byte) bool {
	for _, p := range payloads {
		if !c.write(ctx, nextMessage(id, p)) {
			return false
		}
	}
	return true
}

// finishRelayed sends what gqlgen still has for a stream that ends, and
// completes the operation, unless the client completed it first.
func (c *connection) finishRelayed(ctx context.Context, id string, op *operation, responses graphql.ResponseHandler) {
	for {
		resp := responses(ctx)
		if resp == nil {
			break
		}
		if !c.sendNext(ctx, id, resp) {
			return
		}
	}
	c.sendLast(ctx, id, op, message{ID: id, Type: typeComplete})
}
