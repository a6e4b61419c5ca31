package graph

import (
	"context"
	"errors"

	"github.com/99designs/gqlgen/graphql"

	"sessiongraph/internal/apperr"
	"sessiongraph/internal/events"
)

// live maps a subscription's events onto its values, on the subscriber's
// own goroutine. When the subscription ends because the subscriber fell
// behind (or its replay failed), the client receives a null value with an
// error carrying a code, then the subscription completes: it is told, never
// silently cut short.
func live[T any](ctx context.Context, src events.Source, each func(*events.Event) []*T) <-chan *T {
	out := make(chan *T, 1)
	send := func(v *T) bool {
		select {
		case out <- v:
			return true
		case <-ctx.Done():
			return false
		}
	}
	src(func(ev *events.Event) bool {
		for _, v := range each(ev) {
			if !send(v) {
				return false
			}
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
		send(nil)
	})
	return out
}

// same passes events through unchanged.
func same(ev *events.Event) []*events.Event { return []*events.Event{ev} }
