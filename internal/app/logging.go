package app

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

// requestIDs adds the request id (and, when tracing, the trace id) to every
// record logged with a request's context, so that an error logged deep in
// a resolver can be matched to the access log line and trace of its request.
type requestIDs struct{ slog.Handler }

// Handle implements slog.Handler.
func (h requestIDs) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	if sc := trace.SpanContextFromContext(ctx); sc.HasTraceID() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()))
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
