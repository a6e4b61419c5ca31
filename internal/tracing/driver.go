package tracing

import (
	"context"
	"database/sql"

	"entgo.io/ent/dialect"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Driver wraps an ent driver so that every statement, BEGIN and COMMIT is
// a span ("db.query", "db.exec", ...) with the SQL text. Statement
// arguments are never recorded: they hold the sessions' content.
func Driver(d dialect.Driver, tp trace.TracerProvider) dialect.Driver {
	return tracedDriver{Driver: d, tracer: tp.Tracer(Name)}
}

// rawSQL is what ent's generated ExecContext and QueryContext look for.
type rawSQL interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

type tracedDriver struct {
	dialect.Driver
	tracer trace.Tracer
}

// span runs fn inside a client span named name; a statement that returns
// sql.ErrNoRows is not an error worth marking.
func span(ctx context.Context, tracer trace.Tracer, name, query string, fn func(context.Context) error) error {
	attrs := []attribute.KeyValue{attribute.String("db.system", "postgresql")}
	if query != "" {
		attrs = append(attrs, attribute.String("db.statement", query))
	}
	ctx, sp := tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	defer sp.End()
	err := fn(ctx)
	if err != nil && err != sql.ErrNoRows {
		sp.RecordError(err)
		sp.SetStatus(codes.Error, "statement failed")
	}
	return err
}

func (d tracedDriver) Exec(ctx context.Context, query string, args, v any) error {
	return span(ctx, d.tracer, "db.exec", query, func(ctx context.Context) error { return d.Driver.Exec(ctx, query, args, v) })
}

func (d tracedDriver) Query(ctx context.Context, query string, args, v any) error {
	return span(ctx, d.tracer, "db.query", query, func(ctx context.Context) error { return d.Driver.Query(ctx, query, args, v) })
}

func (d tracedDriver) ExecContext(ctx context.Context, query string, args ...any) (res sql.Result, err error) {
	err = span(ctx, d.tracer, "db.exec", query, func(ctx context.Context) (err error) {
		res, err = d.Driver.(rawSQL).ExecContext(ctx, query, args...)
		return err
	})
	return res, err
}

func (d tracedDriver) QueryContext(ctx context.Context, query string, args ...any) (rows *sql.Rows, err error) {
	err = span(ctx, d.tracer, "db.query", query, func(ctx context.Context) (err error) {
		rows, err = d.Driver.(rawSQL).QueryContext(ctx, query, args...)
		return err
	})
	return rows, err
}

func (d tracedDriver) Tx(ctx context.Context) (dialect.Tx, error) { return d.BeginTx(ctx, nil) }

func (d tracedDriver) BeginTx(ctx context.Context, opts *sql.TxOptions) (tx dialect.Tx, err error) {
	err = span(ctx, d.tracer, "db.begin", "", func(ctx context.Context) (err error) {
		tx, err = d.Driver.(interface {
			BeginTx(context.Context, *sql.TxOptions) (dialect.Tx, error)
		}).BeginTx(ctx, opts)
		return err
	})
	if err != nil {
		return nil, err
	}
	return tracedTx{Tx: tx, tracer: d.tracer, ctx: ctx}, nil
}

type tracedTx struct {
	dialect.Tx
	tracer trace.Tracer
	ctx    context.Context // the transaction's: Commit and Rollback take none
}

func (t tracedTx) Exec(ctx context.Context, query string, args, v any) error {
	return span(ctx, t.tracer, "db.exec", query, func(ctx context.Context) error { return t.Tx.Exec(ctx, query, args, v) })
}

func (t tracedTx) Query(ctx context.Context, query string, args, v any) error {
	return span(ctx, t.tracer, "db.query", query, func(ctx context.Context) error { return t.Tx.Query(ctx, query, args, v) })
}

func (t tracedTx) ExecContext(ctx context.Context, query string, args ...any) (res sql.Result, err error) {
	err = span(ctx, t.tracer, "db.exec", query, func(ctx context.Context) (err error) {
		res, err = t.Tx.(rawSQL).ExecContext(ctx, query, args...)
		return err
	})
	return res, err
}

func (t tracedTx) QueryContext(ctx context.Context, query string, args ...any) (rows *sql.Rows, err error) {
	err = span(ctx, t.tracer, "db.query", query, func(ctx context.Context) (err error) {
		rows, err = t.Tx.(rawSQL).QueryContext(ctx, query, args...)
		return err
	})
	return rows, err
}

func (t tracedTx) Commit() error {
	return span(t.ctx, t.tracer, "db.commit", "", func(context.Context) error { return t.Tx.Commit() })
}

func (t tracedTx) Rollback() error {
	return span(t.ctx, t.tracer, "db.rollback", "", func(context.Context) error { return t.Tx.Rollback() })
}
