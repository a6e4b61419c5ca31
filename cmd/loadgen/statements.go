package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync/atomic"

	"sessiongraph/internal/app"
	"sessiongraph/internal/dbhook"
)

// statementTally counts the round trips the pool makes to PostgreSQL for
// ent and the store's writes on behalf of one kind of operation (a pgx
// tracer counts them: a statement, BEGIN, COMMIT and ROLLBACK are one each,
// and so is a write's batch of statements sent together), and the time
// spent in them: the network, PostgreSQL's work and, at COMMIT, the WAL
// flush. Waiting for a pool connection is not in it.
type statementTally struct {
	n    atomic.Int64
	wait atomic.Int64 // nanoseconds
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

// countStatements makes each round trip count, with its time, on the
// tally of the request it serves (the server's middleware puts it in the
// request's context), or on background when no request is behind it.
func countStatements(c *app.Config, background *statementTally) {
	c.RoundTripHook = func(ctx context.Context, _ dbhook.Kind, _ string, run func(context.Context) error) error {
		t, ok := ctx.Value(tallyKey{}).(*statementTally)
		if !ok {
			t = background
		}
		return run(context.WithValue(ctx, countedKey{}, t))
	}
	c.RoundTrips = func(ctx context.Context, rt dbhook.RoundTrip) {
		t, ok := ctx.Value(countedKey{}).(*statementTally)
		if !ok {
			return
		}
		for _, q := range rt.Statements {
			show(ctx, q)
		}
		t.n.Add(1)
		t.wait.Add(int64(rt.Took))
	}
}

type countedKey struct{}
