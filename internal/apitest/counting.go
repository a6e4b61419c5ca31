package apitest

import (
	"context"
	"database/sql"
	"sync/atomic"

	"entgo.io/ent/dialect"
)

// CountingDriver counts the round trips ent sends (statements, BEGIN and
// COMMIT) without formatting them, so that counting costs nothing measurable.
type CountingDriver struct {
	dialect.Driver
	n *atomic.Int64
}

// rawSQL is what ent's generated ExecContext and QueryContext look for.
type rawSQL interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Exec implements dialect.Driver.
func (d CountingDriver) Exec(ctx context.Context, query string, args, v any) error {
	d.n.Add(1)
	return d.Driver.Exec(ctx, query, args, v)
}

// Query implements dialect.Driver.
func (d CountingDriver) Query(ctx context.Context, query string, args, v any) error {
	d.n.Add(1)
	return d.Driver.Query(ctx, query, args, v)
}

// ExecContext serves ent's raw ExecContext.
func (d CountingDriver) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	d.n.Add(1)
	return d.Driver.(rawSQL).ExecContext(ctx, query, args...)
}

// QueryContext serves ent's raw QueryContext.
func (d CountingDriver) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	d.n.Add(1)
	return d.Driver.(rawSQL).QueryContext(ctx, query, args...)
}

// Tx implements dialect.Driver; BEGIN is a round trip.
func (d CountingDriver) Tx(ctx context.Context) (dialect.Tx, error) {
	return d.BeginTx(ctx, nil)
}

// BeginTx starts a counted transaction.
func (d CountingDriver) BeginTx(ctx context.Context, opts *sql.TxOptions) (dialect.Tx, error) {
	d.n.Add(1)
	tx, err := d.Driver.(interface {
		BeginTx(context.Context, *sql.TxOptions) (dialect.Tx, error)
	}).BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return countingTx{Tx: tx, n: d.n}, nil
}

type countingTx struct {
	dialect.Tx
	n *atomic.Int64
}

func (t countingTx) Exec(ctx context.Context, query string, args, v any) error {
	t.n.Add(1)
	return t.Tx.Exec(ctx, query, args, v)
}

func (t countingTx) Query(ctx context.Context, query string, args, v any) error {
	t.n.Add(1)
	return t.Tx.Query(ctx, query, args, v)
}

func (t countingTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	t.n.Add(1)
	return t.Tx.(rawSQL).ExecContext(ctx, query, args...)
}

func (t countingTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	t.n.Add(1)
	return t.Tx.(rawSQL).QueryContext(ctx, query, args...)
}

func (t countingTx) Commit() error {
	t.n.Add(1)
	return t.Tx.Commit()
}
