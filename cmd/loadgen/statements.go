package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"entgo.io/ent/dialect"

	"sessiongraph/internal/dbhook"
	"sessiongraph/internal/pipedb"
)

// statementTally counts the round trips the pool makes to PostgreSQL for
// ent on behalf of one kind of operation (internal/pipedb counts them: a
// statement is one, a BEGIN none of its own since it goes with the first
// statement, a COMMIT none when the write's last statement carries it),
// and the time spent
// waiting for them: a connection from the pool, the network, PostgreSQL's
// work and, at COMMIT, the WAL flush. Reading a query's rows after the first
// is the caller's and is not in it.
type statementTally struct {
	n    atomic.Int64
	wait atomic.Int64 // nanoseconds
}

// timed adds the time since start.
func (t *statementTally) timed(start time.Time) {
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

// countStatements wraps an ent driver so that each round trip counts, with
// its time, on the tally of the request it serves (the server's middleware
// puts it in the request's context), or on background when no request is
// behind it; a transaction's COMMIT counts where its BEGIN did.
func countStatements(d dialect.Driver, background *statementTally) dialect.Driver {
	return dbhook.Wrap(d, func(ctx context.Context, kind dbhook.Kind, query string, run func(context.Context) error) error {
		if query == "" {
			query = strings.ToUpper(string(kind))
		}
		show(ctx, query)
		t, ok := ctx.Value(tallyKey{}).(*statementTally)
		if !ok {
			t = background
		}
		defer t.timed(time.Now())
		return run(pipedb.CountRoundTrips(ctx, &t.n))
	})
}
