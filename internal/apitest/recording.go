package apitest

import (
	"context"
	"database/sql"
	"sync"

	"entgo.io/ent/dialect"

	"sessiongraph/internal/app"
)

// Statement is one statement ent sent, with the arguments it was sent with.
type Statement struct {
	Query string
	Args  []any
}

// Recorder keeps the statements a server sends through ent while it is on,
// with their arguments, so that a test can EXPLAIN exactly what a request
// ran (graph/plans_test.go).
type Recorder struct {
	mu    sync.Mutex
	on    bool
	taken []Statement
}

// Recording returns a configure function for New, Replica or NewGrown that
// records through r, beside the statement count.
func Recording(r *Recorder) func(*app.Config) {
	return func(c *app.Config) {
		inner := c.WrapDriver
		c.WrapDriver = func(d dialect.Driver) dialect.Driver {
			if inner != nil {
				d = inner(d)
			}
			return recordingDriver{Driver: d, r: r}
		}
	}
}

// Record runs do and returns the statements sent meanwhile.
func (r *Recorder) Record(do func()) []Statement {
	r.mu.Lock()
	r.on, r.taken = true, nil
	r.mu.Unlock()
	do()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on = false
	return r.taken
}

func (r *Recorder) add(query string, args any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.on {
		return
	}
	list, _ := args.([]any)
	r.taken = append(r.taken, Statement{Query: query, Args: append([]any(nil), list...)})
}

// rawSQL is what ent's generated ExecContext and QueryContext look for.
type rawSQL interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

type recordingDriver struct {
	dialect.Driver
	r *Recorder
}

func (d recordingDriver) Exec(ctx context.Context, query string, args, v any) error {
	d.r.add(query, args)
	return d.Driver.Exec(ctx, query, args, v)
}

func (d recordingDriver) Query(ctx context.Context, query string, args, v any) error {
	d.r.add(query, args)
	return d.Driver.Query(ctx, query, args, v)
}

func (d recordingDriver) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	d.r.add(query, args)
	return d.Driver.(rawSQL).ExecContext(ctx, query, args...)
}

func (d recordingDriver) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	d.r.add(query, args)
	return d.Driver.(rawSQL).QueryContext(ctx, query, args...)
}

func (d recordingDriver) Tx(ctx context.Context) (dialect.Tx, error) { return d.BeginTx(ctx, nil) }

func (d recordingDriver) BeginTx(ctx context.Context, opts *sql.TxOptions) (dialect.Tx, error) {
	tx, err := d.Driver.(interface {
		BeginTx(context.Context, *sql.TxOptions) (dialect.Tx, error)
	}).BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return recordingTx{Tx: tx, r: d.r}, nil
}

type recordingTx struct {
	dialect.Tx
	r *Recorder
}

func (t recordingTx) Exec(ctx context.Context, query string, args, v any) error {
	t.r.add(query, args)
	return t.Tx.Exec(ctx, query, args, v)
}

func (t recordingTx) Query(ctx context.Context, query string, args, v any) error {
	t.r.add(query, args)
	return t.Tx.Query(ctx, query, args, v)
}

func (t recordingTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	t.r.add(query, args)
	return t.Tx.(rawSQL).ExecContext(ctx, query, args...)
}

func (t recordingTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	t.r.add(query, args)
	return t.Tx.(rawSQL).QueryContext(ctx, query, args...)
}
