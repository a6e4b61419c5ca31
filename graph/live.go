package graph

import (
	"context"
	"errors"
	"sync"

	"github.com/99designs/gqlgen/graphql"

	"sessiongraph/graph/wsproto"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/events"
)

// live maps a subscription's events onto its values. Replayed events are
// sent as the client takes them; live ones are offered without blocking by
// the hub itself, into a buffer of events.BufferSize, so that when the
// subscription ends because the subscriber fell behind (or its replay
// failed) the client still receives a null value with an error carrying a
// code before it completes: it is told, never silently cut short.
//
// Over WebSocket the events go through the transport's relay, which encodes
// a live event once for every subscriber with the same operation; the
// values of an event depend on nothing else (each is a function of the
// event and the subscription's arguments), which is what makes that right.
func live[T any](ctx context.Context, src events.Source, each func(*events.Event) []*T) <-chan *T {
	if relay := wsproto.ClaimRelay(ctx, events.BufferSize); relay != nil {
		return relayed(ctx, relay, src, each)
	}
	out := make(chan *T, events.BufferSize+1)
	src(func(ev *events.Event) bool {
		for _, v := range each(ev) {
			select {
			case out <- v:
			case <-ctx.Done():
				return false
			}
		}
		return true
	}, func(ev *events.Event) bool {
		vals := each(ev)
		if cap(out)-len(out)-1 < len(vals) {
			return false
		}
		for _, v := range vals {
			out <- v
		}
		return true
	}, func(err error) {
		defer close(out)
		if err = endError(err); err == nil {
			return
		}
		reportEnd(ctx, err)
		select {
		case out <- nil:
		default:
		}
	})
	return out
}

// endReason carries why a subscription ended to the response that reports
// it. gqlgen collects a response's errors from that response's own
// context, so an error added to the resolver's context (the first
// response's) after the subscription started would be lost, and the client
// would see a null value without knowing why.
type endReason struct {
	mu  sync.Mutex
	err error
}

type endReasonKey struct{}

// reportEnd records err for the next response of ctx's subscription.
func reportEnd(ctx context.Context, err error) {
	if r, ok := ctx.Value(endReasonKey{}).(*endReason); ok {
		r.mu.Lock()
		r.err = err
		r.mu.Unlock()
		return
	}
	graphql.AddError(ctx, err)
}

// take returns why the subscription ended, once.
func (r *endReason) take() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.err
	r.err = nil
	return err
}

// relayed is live over the WebSocket transport's relay: the transport puts
// an event's values on the channel as it sends them.
func relayed[T any](ctx context.Context, relay *wsproto.Relay, src events.Source, each func(*events.Event) []*T) <-chan *T {
	out := make(chan *T, 1)
	src(func(ev *events.Event) bool {
		return relay.Send(ctx, &eventValues[T]{ev: ev, vals: each(ev), out: out})
	}, func(ev *events.Event) bool {
		return relay.Offer(&eventValues[T]{ev: ev, vals: each(ev), out: out})
	}, func(err error) {
		last := &eventValues[T]{out: out, last: true}
		if err = endError(err); err != nil {
			last.vals = []*T{nil}
		}
		relay.End(last, err)
	})
	return out
}

// endError is why a subscription ended, for its client; nil when the client left.
func endError(err error) error {
	if err == nil {
		return nil
	}
	code := apperr.Internal
	if errors.Is(err, events.ErrTooSlow) {
		code = apperr.SubscriberTooSlow
	}
	return apperr.New(code, "%v", err)
}

// eventValues is one event's values as relayed; the last closes the channel.
type eventValues[T any] struct {
	ev   *events.Event
	vals []*T
	out  chan<- *T
	last bool
}

func (e *eventValues[T]) Next() bool {
	if len(e.vals) == 0 {
		if e.last {
			close(e.out)
		}
		return false
	}
	e.out <- e.vals[0]
	e.vals = e.vals[1:]
	return true
}

func (e *eventValues[T]) Encoded(key string, encode func() (any, bool)) (any, bool) {
	if e.ev == nil {
		return encode()
	}
	return e.ev.Encoded(key, encode)
}

// same passes events through unchanged.
func same(ev *events.Event) []*events.Event { return []*events.Event{ev} }
