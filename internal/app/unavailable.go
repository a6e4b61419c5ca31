package app

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"entgo.io/ent/dialect"
	"github.com/jackc/pgx/v5/pgconn"

	"sessiongraph/internal/apperr"
	"sessiongraph/internal/dbhook"
)

// The database being down or out of reach is not a bug of ours: a request
// it fails answers UNAVAILABLE, which a client retries. This hook decides
// that; graph/httptransport.go answers such a POST with 503 and
// Retry-After, and authenticate a key it cannot check.

// outage remembers whether the database is out of reach, so that an outage
// is logged twice, when it starts (ERROR) and when it ends, instead of once
// per request it fails: 7,661 identical lines in 14 s hid everything else.
//
// Only a round trip that began after the last change of state may change
// it again: as the database goes, round trips begun before it went still
// succeed for a moment beside those that fail, and each used to flip the
// state and log a line (five pairs within 30 µs for one outage).
type outage struct {
	log  *slog.Logger
	down atomic.Bool // read on every round trip, without the lock
	mu   sync.Mutex
	// changed is when down last changed (monotonic), under mu.
	changed time.Time
	clock   func() time.Time // time.Now when nil
}

// now is the outage's clock's time.
func (o *outage) now() time.Time {
	if o.clock != nil {
		return o.clock()
	}
	return time.Now()
}

// failed notes a round trip, begun at started, that could not reach the
// database.
func (o *outage) failed(started time.Time, err error) {
	if o.settled(started, true) {
		o.log.Error("the database is unreachable: requests answer UNAVAILABLE (HTTP 503) until it is back; "+
			"they are not logged one by one meanwhile", "error", err)
	}
}

// reached notes a round trip, begun at started, that reached the database.
func (o *outage) reached(started time.Time) {
	if o.down.Load() && o.settled(started, false) {
		o.log.Warn("the database is reachable again")
	}
}

// settled sets down to the state a round trip begun at started saw, and
// reports whether that changed it; a round trip begun before the last
// change is older news and changes nothing.
func (o *outage) settled(started time.Time, down bool) bool {
	if o.down.Load() == down {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.down.Load() == down || started.Before(o.changed) {
		return false
	}
	o.down.Store(down)
	o.changed = o.now()
	return true
}

// isDown reports whether the last round trip could not reach the database.
func (o *outage) isDown() bool { return o.down.Load() }

// reportUnavailable wraps the ent driver so that a round trip that fails
// because the database cannot be reached answers UNAVAILABLE (keeping the
// driver's error as its cause, for the log), and notes in o when an outage
// starts and ends.
func reportUnavailable(d dialect.Driver, o *outage) dialect.Driver {
	return dbhook.Wrap(d, unavailable(o))
}

// unavailable is reportUnavailable's hook, for a round trip of any kind.
func unavailable(o *outage) dbhook.Hook {
	return func(ctx context.Context, _ dbhook.Kind, _ string, run func(context.Context) error) error {
		started := o.now()
		err := run(ctx)
		if err == nil {
			o.reached(started)
		}
		if err == nil || ctx.Err() != nil {
			return err
		}
		if statementTimedOut(err) {
			return &apperr.Error{Code: apperr.Timeout, Cause: err,
				Message: "a statement ran past the database's statement_timeout and was cancelled; ask for less"}
		}
		if !databaseUnreachable(err) {
			return err
		}
		o.failed(started, err)
		return &apperr.Error{Code: apperr.Unavailable, Cause: err,
			Message: "the database is unavailable right now; retry the request shortly"}
	}
}

// statementTimedOut reports a statement PostgreSQL cancelled (57014):
// statement_timeout, set by an operator on the role, the database or the
// URL (docs/fairness.md), or a cancel request. The operation's own deadline
// is the context's, which presentError answers TIMEOUT already.
func statementTimedOut(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == "57014"
}

// databaseUnreachable reports an error that says the database could not be
// reached or dropped the connection, rather than refusing the statement.
func databaseUnreachable(err error) bool {
	var connect *pgconn.ConnectError
	var pg *pgconn.PgError
	var netErr net.Error
	switch {
	case errors.As(err, &connect), errors.As(err, &netErr):
		return true
	case errors.As(err, &pg):
		// Class 08 is connection exceptions; 57P01-03 a server shutting down
		// or starting; 53300 no connection slot free.
		return strings.HasPrefix(pg.Code, "08") || pg.Code == "57P01" || pg.Code == "57P02" ||
			pg.Code == "57P03" || pg.Code == "53300"
	}
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		pgconn.SafeToRetry(err)
}
