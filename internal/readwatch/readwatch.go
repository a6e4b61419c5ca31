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
	"sync"
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
// watches it but the Tracer, which watches the context it came from. It
// holds the watch of one statement at a time, so that a read's statements
// one after another cost no allocation of their own for it.
type detached struct {
	context.Context
	busy  atomic.Bool // watch is a statement's
	watch watch
}

// originKey finds a detached context, through the values others add to it
// on the way to the driver.
type originKey struct{}

func (*detached) Done() <-chan struct{} { return nil }

func (d *detached) Value(key any) any {
	if key == (originKey{}) {
		return d
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
	return &detached{Context: ctx}
}

// Tracer watches the statements run with a detached context; it passes
// every statement on to Inner, when set.
type Tracer struct {
	Inner pgx.QueryTracer
}

// watchKey holds the watch of a statement that ran while another one of
// the same detached context was being watched.
type watchKey struct{}

// watch is one statement's watch on its context.
type watch struct {
	stop func() bool
	ran  sync.WaitGroup // the context's end has set the deadline
}

// start watches origin until end: its end sets a past deadline on conn's
// connection, which fails the statement's read, as pgx's own watch does
// (pgconn.DeadlineContextWatcherHandler).
func (w *watch) start(origin context.Context, conn *pgx.Conn) {
	netConn := conn.PgConn().Conn()
	w.ran.Add(1)
	w.stop = context.AfterFunc(origin, func() {
		netConn.SetDeadline(time.Now())
		w.ran.Done()
	})
}

// end stops the watch; when the context ended meanwhile, the deadline it
// set must not outlive the statement, should the connection still be
// usable.
func (w *watch) end(conn *pgx.Conn) {
	if w.stop() {
		w.ran.Done()
		return
	}
	w.ran.Wait()
	conn.PgConn().Conn().SetDeadline(time.Time{})
}

// TraceQueryStart implements pgx.QueryTracer.
func (t Tracer) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if t.Inner != nil {
		ctx = t.Inner.TraceQueryStart(ctx, conn, data)
	}
	d, ok := ctx.Value(originKey{}).(*detached)
	if !ok {
		return ctx
	}
	if !d.busy.CompareAndSwap(false, true) {
		w := &watch{}
		w.start(d.Context, conn)
		return context.WithValue(ctx, watchKey{}, w)
	}
	d.watch.start(d.Context, conn)
	return ctx
}

// TraceQueryEnd implements pgx.QueryTracer: the statement's result set is
// closed, its watch ends.
func (t Tracer) TraceQueryEnd(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryEndData) {
	if w, ok := ctx.Value(watchKey{}).(*watch); ok {
		w.end(conn)
	} else if d, ok := ctx.Value(originKey{}).(*detached); ok {
		d.watch.end(conn)
		d.busy.Store(false)
	}
	if t.Inner != nil {
		t.Inner.TraceQueryEnd(ctx, conn, data)
	}
}

// TraceBatchStart, TraceBatchQuery and TraceBatchEnd are Inner's, when it
// traces batches (a write's, internal/store): no read is detached in one.
func (t Tracer) TraceBatchStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	if b, ok := t.Inner.(pgx.BatchTracer); ok {
		return b.TraceBatchStart(ctx, conn, data)
	}
	return ctx
}

func (t Tracer) TraceBatchQuery(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchQueryData) {
	if b, ok := t.Inner.(pgx.BatchTracer); ok {
		b.TraceBatchQuery(ctx, conn, data)
	}
}

func (t Tracer) TraceBatchEnd(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchEndData) {
	if b, ok := t.Inner.(pgx.BatchTracer); ok {
		b.TraceBatchEnd(ctx, conn, data)
	}
}
