package tracing

import (
	"context"
	"database/sql"

	"entgo.io/ent/dialect"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"sessiongraph/internal/dbhook"
)

// Driver wraps an ent driver so that every statement, BEGIN and COMMIT is
// a span ("db.query", "db.exec", "db.begin", ...) with the SQL text.
// Statement arguments are never recorded: they hold the sessions' content.
func Driver(d dialect.Driver, tp trace.TracerProvider) dialect.Driver {
	return dbhook.Wrap(d, Hook(tp))
}

// Hook makes a span of every round trip it runs, as Driver does; a write's
// batch ("db.batch") is one.
func Hook(tp trace.TracerProvider) dbhook.Hook {
	tracer := tp.Tracer(Name)
	return func(ctx context.Context, kind dbhook.Kind, query string, run func(context.Context) error) error {
		attrs := []attribute.KeyValue{attribute.String("db.system", "postgresql")}
		if query != "" {
			attrs = append(attrs, attribute.String("db.statement", query))
		}
		ctx, sp := tracer.Start(ctx, "db."+string(kind), trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
		defer sp.End()
		err := run(ctx)
		// A query that finds no row is not a failed statement.
		if err != nil && err != sql.ErrNoRows {
			sp.RecordError(err)
			sp.SetStatus(codes.Error, "statement failed")
		}
		return err
	}
}
