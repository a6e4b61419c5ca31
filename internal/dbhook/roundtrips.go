package dbhook

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// RoundTrip is one exchange of a pool connection with PostgreSQL, as pgx
// saw it: a statement (BEGIN, COMMIT and ROLLBACK included), or a batch of
// them sent together.
type RoundTrip struct {
	// Statements are the texts sent, in order: one, or a batch's; Args
	// are their arguments, as given to pgx.
	Statements []string
	Args       [][]any
	// Took is from the send to the last answer read.
	Took time.Duration
}

// RoundTrips is a pgx tracer (pgx.ConnConfig's Tracer) that calls itself
// once per round trip, with the context the statement ran with. Preparing
// a statement the first time a connection sees it, and the pool's pings,
// are not counted: neither depends on what an operation does.
type RoundTrips func(ctx context.Context, rt RoundTrip)

type startedKey struct{}

type started struct {
	statements []string
	args       [][]any
	at         time.Time
}

func (f RoundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	return context.WithValue(ctx, startedKey{}, started{statements: []string{data.SQL}, args: [][]any{data.Args}, at: time.Now()})
}

func (f RoundTrips) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	f.end(ctx)
}

func (f RoundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	s := started{at: time.Now()}
	for _, q := range data.Batch.QueuedQueries {
		s.statements, s.args = append(s.statements, q.SQL), append(s.args, q.Arguments)
	}
	return context.WithValue(ctx, startedKey{}, s)
}

func (RoundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (f RoundTrips) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchEndData) {
	f.end(ctx)
}

func (f RoundTrips) end(ctx context.Context) {
	if s, ok := ctx.Value(startedKey{}).(started); ok {
		f(ctx, RoundTrip{Statements: s.statements, Args: s.args, Took: time.Since(s.at)})
	}
}
