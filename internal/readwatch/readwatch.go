// Package readwatch runs a read's statement without the goroutine that
// database/sql starts for every result set whose context can end (to close
// it when the context does), and still ends the statement when the read's
// context ends, as pgx does for a statement it watches.
//
// A read passes Detach(ctx) instead of ctx: a context with ctx's values,
// deadline and error but no Done channel, which database/sql and pgx take
// for one that never ends, so neither watches it. The pool's Tracer
// watches it instead: from the statement's start until its result set is
// closed, the end of ctx sets a past deadline on the connection, which
// fails its read; pgx then closes the connection and asks PostgreSQL to
// cancel the statement, and reports ctx's error, exactly as when it
// watches ctx itself. What a detached read does not do is give up waiting
// for a free connection of the pool when ctx ends: it waits for one, and
// its statement then ends at once.
package readwatch

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// installed is set once a pool's connections carry the Tracer: before,
// Detach leaves contexts as they are, so that no statement goes unwatched.
var installed atomic.Bool

// Install makes config's connections watch detached reads, keeping the
// tracer config had.
func Install(config *pgx.ConnConfig) {
	config.Tracer = Tracer{Inner: config.Tracer}
	installed.Store(true)
}

// detached is a context that reports no Done channel, so that no one
// watches it but the Tracer, which watches the context it came from.
type detached struct {
	context.Context
}

// originKey finds the context a detached one came from, through the
// values others add to it on the way to the driver.
type originKey struct{}

func (detached) Done() <-chan struct{} { return nil }

func (d detached) Value(key any) any {
	if key == (originKey{}) {
		return d.Context
	}
	return d.Context.Value(key)
}

// Detach returns ctx for a read on a pool whose connections Install
// prepared: one whose end no goroutine watches, and which still ends the
// read's statement when ctx ends. A context that cannot end, or any
// context before Install, is returned as it is.
func Detach(ctx context.Context) context.Context {
	if ctx.Done() == nil || !installed.Load() {
		return ctx
	}
	return detached{ctx}
}

// Tracer watches the statements run with a detached context; it passes
// every statement on to Inner, when set.
type Tracer struct {
	Inner pgx.QueryTracer
}

type watchKey struct{}

// watch is one detached statement's watch on its context.
type watch struct {
	stop func() bool
	done chan struct{}
}

// TraceQueryStart implements pgx.QueryTracer.
func (t Tracer) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if t.Inner != nil {
		ctx = t.Inner.TraceQueryStart(ctx, conn, data)
	}
	origin, ok := ctx.Value(originKey{}).(context.Context)
	if !ok {
		return ctx
	}
	w := &watch{done: make(chan struct{})}
	netConn := conn.PgConn().Conn()
	w.stop = context.AfterFunc(origin, func() {
		// What pgx's own watch does (pgconn.DeadlineContextWatcherHandler).
		netConn.SetDeadline(time.Now())
		close(w.done)
	})
	return context.WithValue(ctx, watchKey{}, w)
}

// TraceQueryEnd implements pgx.QueryTracer: the statement's result set is
// closed, its watch ends.
func (t Tracer) TraceQueryEnd(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryEndData) {
	if w, ok := ctx.Value(watchKey{}).(*watch); ok && !w.stop() {
		// The context ended meanwhile: the deadline it set must not
		// outlive the statement, should the connection still be usable.
		<-w.done
		conn.PgConn().Conn().SetDeadline(time.Time{})
	}
	if t.Inner != nil {
		t.Inner.TraceQueryEnd(ctx, conn, data)
	}
}
