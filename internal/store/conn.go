package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
)

// onConn is ent's driver on a write's connection, in the transaction the
// write's first exchange began (Begin): ent's transaction on it is that
// one, which the write's Commit or Rollback ends, so ent's own Commit and
// Rollback do nothing.
type onConn struct{ entsql.Conn }

func (d onConn) Tx(context.Context) (dialect.Tx, error)                      { return d, nil }
func (d onConn) BeginTx(context.Context, *sql.TxOptions) (dialect.Tx, error) { return d, nil }
func (onConn) Commit() error                                                 { return nil }
func (onConn) Rollback() error                                               { return nil }
func (onConn) Close() error                                                  { return nil }
func (onConn) Dialect() string                                               { return dialect.Postgres }

// statement is a statement with its arguments.
type statement struct {
	query string
	args  []any
}

// builder is ent's driver for the statements a write sends with its
// commit (Tx.WithCommit): it keeps each statement ent executes, in order,
// and sends nothing. ent reads the row count of an update, which is one:
// the write's session.
type builder struct{ statements *[]statement }

var errBuiltForCommit = errors.New("store: WithCommit builds statements for the commit and cannot read; read through Tx")

func (b builder) Exec(_ context.Context, query string, args, v any) error {
	argv, _ := args.([]any)
	*b.statements = append(*b.statements, statement{query: query, args: argv})
	if res, ok := v.(*sql.Result); ok {
		*res = driver.RowsAffected(1)
	}
	return nil
}

func (builder) Query(context.Context, string, any, any) error { return errBuiltForCommit }
func (b builder) Tx(context.Context) (dialect.Tx, error)      { return dialect.NopTx(b), nil }
func (builder) Close() error                                  { return nil }
func (builder) Dialect() string                               { return dialect.Postgres }
