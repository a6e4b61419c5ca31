package graph

import (
	"context"
	"errors"

	"github.com/99designs/gqlgen/graphql"

	"sessiongraph/internal/apperr"
	"sessiongraph/internal/events"
)

// live maps an event stream onto a subscription's values. When the stream
// ends because the subscriber fell behind (or the replay failed), the client
// receives a null value with an error carrying a code, then the subscription
// completes: it is told, never silently cut short.
func live[T any](ctx context.Context, st *events.Stream, each func(*events.Event) []*T) <-chan *T {
	out := make(chan *T, 1)
	go func() {
		defer close(out)
		for ev := range st.C {
			for _, v := range each(ev) {
				select {
				case out <- v:
				case <-ctx.Done():
					return
				}
			}
		}
		if err := st.Err(); err != nil {
			code := apperr.Internal
			if errors.Is(err, events.ErrTooSlow) {
				code = apperr.SubscriberTooSlow
			}
			graphql.AddError(ctx, apperr.New(code, "%v", err))
			select {
			case out <- nil:
			case <-ctx.Done():
			}
		}
	}()
	return out
}

// same passes events through unchanged.
func same(ev *events.Event) []*events.Event { return []*events.Event{ev} }
