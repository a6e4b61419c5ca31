package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"entgo.io/ent/dialect"
)

// statementTally counts the round trips ent sends to PostgreSQL (statements,
// BEGIN and COMMIT) on behalf of one kind of operation, and the time spent
// waiting for them: a connection from the pool, the network, PostgreSQL's
// work and, at COMMIT, the WAL flush. Reading a query's rows after the first
// is the caller's and is not in it.
type statementTally struct {
	n    atomic.Int64
	wait atomic.Int64 // nanoseconds
}

// timed counts one round trip and adds the time since start.
func (t *statementTally) timed(start time.Time) {
	t.n.Add(1)
	t.wait.Add(int64(time.Since(start)))
}

type showKey struct{}

// withShownSQL makes every statement sent under ctx print to w (-show-sql).
func withShownSQL(ctx context.Context, w io.Writer) context.Context {
	return context.WithValue(ctx, showKey{}, w)
}

// show prints a statement when ctx asks for it.
func show(ctx context.Context, query string) {
	if w, ok := ctx.Value(showKey{}).(io.Writer); ok {
		fmt.Fprintf(w, "  %.400s\n", strings.Join(strings.Fields(query), " "))
	}
}

type tallyKey struct{}

// withTally makes every statement sent under ctx count on t.
func withTally(ctx context.Context, t *statementTally) context.Context {
	return context.WithValue(ctx, tallyKey{}, t)
}

// statementCounter is an ent driver that counts each round trip on the tally
// of the request it serves (the server's middleware puts it in the request's
// context), or on background when no request is behind it.
type statementCounter struct {
	dialect.Driver
	background *statementTally
}

func (d statementCounter) tally(ctx context.Context) *statementTally {
	if t, ok := ctx.Value(tallyKey{}).(*statementTally); ok {
		return t
	}
	return d.background
}

// rawSQL is what ent's generated ExecContext and QueryContext look for.
type rawSQL interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Exec implements dialect.Driver.
func (d statementCounter) Exec(ctx context.Context, query string, args, v any) error {
	show(ctx, query)
	defer d.tally(ctx).timed(time.Now())
	return d.Driver.Exec(ctx, query, args, v)
}

// Query implements dialect.Driver.
func (d statementCounter) Query(ctx context.Context, query string, args, v any) error {
	show(ctx, query)
	defer d.tally(ctx).timed(time.Now())
	return d.Driver.Query(ctx, query, args, v)
}

// ExecContext serves ent's raw ExecContext.
func (d statementCounter) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	show(ctx, query)
	defer d.tally(ctx).timed(time.Now())
	return d.Driver.(rawSQL).ExecContext(ctx, query, args...)
}

// QueryContext serves ent's raw QueryContext.
func (d statementCounter) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	show(ctx, query)
	defer d.tally(ctx).timed(time.Now())
	return d.Driver.(rawSQL).QueryContext(ctx, query, args...)
}

// Tx implements dialect.Driver.
func (d statementCounter) Tx(ctx context.Context) (dialect.Tx, error) { return d.BeginTx(ctx, nil) }

// BeginTx starts a transaction whose statements, and COMMIT, count on the
// tally of the context that began it.
func (d statementCounter) BeginTx(ctx context.Context, opts *sql.TxOptions) (dialect.Tx, error) {
	t := d.tally(ctx)
	show(ctx, "BEGIN")
	start := time.Now()
	tx, err := d.Driver.(interface {
		BeginTx(context.Context, *sql.TxOptions) (dialect.Tx, error)
	}).BeginTx(ctx, opts)
	t.timed(start)
	if err != nil {
		return nil, err
	}
	return countedTx{Tx: tx, t: t, ctx: ctx}, nil
}

type countedTx struct {
	dialect.Tx
	t   *statementTally
	ctx context.Context // the one that began it, for COMMIT's -show-sql
}

func (tx countedTx) Exec(ctx context.Context, query string, args, v any) error {
	show(ctx, query)
	defer tx.t.timed(time.Now())
	return tx.Tx.Exec(ctx, query, args, v)
}

func (tx countedTx) Query(ctx context.Context, query string, args, v any) error {
	show(ctx, query)
	defer tx.t.timed(time.Now())
	return tx.Tx.Query(ctx, query, args, v)
}

func (tx countedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	show(ctx, query)
	defer tx.t.timed(time.Now())
	return tx.Tx.(rawSQL).ExecContext(ctx, query, args...)
}

func (tx countedTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	show(ctx, query)
	defer tx.t.timed(time.Now())
	return tx.Tx.(rawSQL).QueryContext(ctx, query, args...)
}

func (tx countedTx) Commit() error {
	show(tx.ctx, "COMMIT")
	defer tx.t.timed(time.Now())
	return tx.Tx.Commit()
}

func (tx countedTx) Rollback() error {
	show(tx.ctx, "ROLLBACK")
	defer tx.t.timed(time.Now())
	return tx.Tx.Rollback()
}
