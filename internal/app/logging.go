package app

import (
	"context"
	"log/slog"
)

// requestIDs adds the request id to every record logged with a request's
// context, so that an error logged deep in a resolver can be matched to the
// access log line of its request.
type requestIDs struct{ slog.Handler }

// Handle implements slog.Handler.
func (h requestIDs) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (h requestIDs) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestIDs{h.Handler.WithAttrs(attrs)}
}

// WithGroup implements slog.Handler.
func (h requestIDs) WithGroup(name string) slog.Handler {
	return requestIDs{h.Handler.WithGroup(name)}
}
