// Package dbhook wraps an ent driver so that every round trip it makes to
// PostgreSQL (statements, BEGIN, COMMIT, ROLLBACK) runs through one hook:
// tests count round trips with it, tracing makes spans of them, and the load
// generator tallies them per operation.
package dbhook

import (
	"context"
	"database/sql"

	"entgo.io/ent/dialect"
)

// Kind says what a round trip is.
type Kind string

// The kinds of round trip.
const (
	Exec     Kind = "exec"
	Query    Kind = "query"
	Begin    Kind = "begin"
	Commit   Kind = "commit"
	Rollback Kind = "rollback"
	// Batch is a write's exchange of several statements (internal/store).
	Batch Kind = "batch"
)

// Hook runs one round trip by calling run, and may do what it likes around
// it. sql is the statement's text ("" for Begin, Commit and Rollback); its
// arguments are never passed. For Commit and Rollback, which take no
// context, ctx is the one that began the transaction.
type Hook func(ctx context.Context, kind Kind, sql string, run func(context.Context) error) error

// Chain is outer around inner: outer runs inner, which runs the round trip.
func Chain(outer, inner Hook) Hook {
	return func(ctx context.Context, kind Kind, sql string, run func(context.Context) error) error {
		return outer(ctx, kind, sql, func(ctx context.Context) error { return inner(ctx, kind, sql, run) })
	}
}

// Wrap returns d with every round trip going through hook.
func Wrap(d dialect.Driver, hook Hook) dialect.Driver {
	return driver{Driver: d, hook: hook}
}

// rawSQL is what ent's generated ExecContext and QueryContext look for.
type rawSQL interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

type driver struct {
	dialect.Driver
	hook Hook
}

func (d driver) Exec(ctx context.Context, query string, args, v any) error {
	return d.hook(ctx, Exec, query, func(ctx context.Context) error { return d.Driver.Exec(ctx, query, args, v) })
}

func (d driver) Query(ctx context.Context, query string, args, v any) error {
	return d.hook(ctx, Query, query, func(ctx context.Context) error { return d.Driver.Query(ctx, query, args, v) })
}

func (d driver) ExecContext(ctx context.Context, query string, args ...any) (res sql.Result, err error) {
	err = d.hook(ctx, Exec, query, func(ctx context.Context) (err error) {
		res, err = d.Driver.(rawSQL).ExecContext(ctx, query, args...)
		return err
	})
	return res, err
}

func (d driver) QueryContext(ctx context.Context, query string, args ...any) (rows *sql.Rows, err error) {
	err = d.hook(ctx, Query, query, func(ctx context.Context) (err error) {
		rows, err = d.Driver.(rawSQL).QueryContext(ctx, query, args...)
		return err
	})
	return rows, err
}

func (d driver) Tx(ctx context.Context) (dialect.Tx, error) { return d.BeginTx(ctx, nil) }

func (d driver) BeginTx(ctx context.Context, opts *sql.TxOptions) (tx dialect.Tx, err error) {
	err = d.hook(ctx, Begin, "", func(ctx context.Context) (err error) {
		tx, err = d.Driver.(interface {
			BeginTx(context.Context, *sql.TxOptions) (dialect.Tx, error)
		}).BeginTx(ctx, opts)
		return err
	})
	if err != nil {
		return nil, err
	}
	return txn{Tx: tx, hook: d.hook, begun: ctx}, nil
}

type txn struct {
	dialect.Tx
	hook  Hook
	begun context.Context // Commit and Rollback take no context
}

func (t txn) Exec(ctx context.Context, query string, args, v any) error {
	return t.hook(ctx, Exec, query, func(ctx context.Context) error { return t.Tx.Exec(ctx, query, args, v) })
}

func (t txn) Query(ctx context.Context, query string, args, v any) error {
	return t.hook(ctx, Query, query, func(ctx context.Context) error { return t.Tx.Query(ctx, query, args, v) })
}

func (t txn) ExecContext(ctx context.Context, query string, args ...any) (res sql.Result, err error) {
	err = t.hook(ctx, Exec, query, func(ctx context.Context) (err error) {
		res, err = t.Tx.(rawSQL).ExecContext(ctx, query, args...)
		return err
	})
	return res, err
}

func (t txn) QueryContext(ctx context.Context, query string, args ...any) (rows *sql.Rows, err error) {
	err = t.hook(ctx, Query, query, func(ctx context.Context) (err error) {
		rows, err = t.Tx.(rawSQL).QueryContext(ctx, query, args...)
		return err
	})
	return rows, err
}

func (t txn) Commit() error {
	return t.hook(t.begun, Commit, "", func(context.Context) error { return t.Tx.Commit() })
}

func (t txn) Rollback() error {
	return t.hook(t.begun, Rollback, "", func(context.Context) error { return t.Tx.Rollback() })
}
