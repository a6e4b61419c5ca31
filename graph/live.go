package graph

import (
	"context"
	"errors"

	"github.com/99designs/gqlgen/graphql"

	"sessiongraph/internal/apperr"
	"sessiongraph/internal/events"
)

// live maps a subscription's events onto its values. Replayed events are
// sent as the client takes them; live ones are offered without blocking by
// the hub itself, into a buffer that keeps one slot free, so that when the
// subscription ends because the subscriber fell behind (or its replay
// failed) the client still receives a null value with an error carrying a
// code before it completes: it is told, never silently cut short.
func live[T any](ctx context.Context, src events.Source, each func(*events.Event) []*T) <-chan *T {
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
		if err == nil {
			return
		}
		code := apperr.Internal
		if errors.Is(err, events.ErrTooSlow) {
			code = apperr.SubscriberTooSlow
		}
		graphql.AddError(ctx, apperr.New(code, "%v", err))
		select {
		case out <- nil:
		default:
		}
	})
	return out
}

// same passes events through unchanged.
func same(ev *events.Event) []*events.Event { return []*events.Event{ev} }
