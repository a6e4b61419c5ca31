package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	entsql "entgo.io/ent/dialect/sql"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"sessiongraph/ent"
	"sessiongraph/ent/session"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/dbhook"
)

// Activity says how a write counts toward the session's expiry. Only
// committed, successful work is activity; a turn's success is known only
// when it ends, so its beginning holds the session open without counting,
// and its failure leaves the activity as the last success left it.
type Activity int

const (
	// Succeeded is committed, successful work (the default): lastActiveAt
	// is now, and the session expires a TTL from now.
	Succeeded Activity = iota
	// Started is work whose success is not known yet (a turn begins): the
	// session expires no sooner than a TTL from now, so the reaper does not
	// expire it under a running turn, but lastActiveAt stays.
	Started
	// Failed is work that ended in failure (a turn fails): lastActiveAt
	// stays, and the session expires a TTL after it again, as if the
	// failed work had not happened.
	Failed
)

// Tx is one write to a live session in progress, from Begin to Commit or
// Rollback: a transaction that holds the session's row lock, on one
// connection taken from the pool for the write. Its round trips are the
// exchanges you see in this file: Begin sends BEGIN, the lock and the reads
// the caller knows before the lock (Read) as one pgx batch; Commit sends the
// statements built for it (WithCommit, ExecWithCommit), the session's update
// with the events and COMMIT as another. Between them, ent's statements
// through Tx run one round trip each, on the same connection and in the
// same transaction. A write reads and writes only through its Tx: waiting
// for a second pool connection while holding the transaction's can
// deadlock the pool when every connection is held by a write doing the
// same.
type Tx struct {
	// Tx is ent on the write's connection, in its transaction: a statement
	// through it runs when it is called. Its Commit and Rollback do
	// nothing; the write's do.
	Tx *ent.Tx
	// WithCommit is ent building statements for Commit's exchange: a create
	// or update saved through it sends nothing then, and goes with the
	// COMMIT, after the statements run through Tx and before the session's
	// update; a query through it fails. For a write whose answer the write
	// does not read (a row it knows whole).
	WithCommit *ent.Client
	// Session is the session row as locked by Begin.
	Session *ent.Session
	// Now is the single timestamp of this commit.
	Now time.Time

	store  *Store
	ctx    context.Context
	conn   *sql.Conn
	pg     *pgx.Conn
	update *ent.SessionUpdate
	// commits are the statements Commit sends before the session's update.
	commits *[]statement
	ended   bool
}

// Read is a read a write makes right after its lock, whose statement and
// arguments it knows before the lock: Begin sends it in the lock's
// exchange, where PostgreSQL runs it once the lock is held, and passes its
// rows to Rows.
type Read struct {
	SQL  string
	Args []any
	Rows func(pgx.Rows) error
}

// Mutation is what a write decided beyond the rows it wrote through its
// Tx: the events it records, in order (at least one), and how it counts
// toward the session's expiry. A write that does in one commit what two
// writes would (recordExchange begins and ends a turn) records both their
// events, so that subscribers see what the two writes would have shown.
type Mutation struct {
	Events   []Event
	Activity Activity
	// ReadBack asks Commit for the session as committed, which costs one
	// more statement.
	ReadBack bool
}

// Record is the Mutation of a successful write that records ev.
func Record(ev Event) Mutation { return Mutation{Events: []Event{ev}} }

// Begin starts a write to a live session: on a connection of its own it
// begins a transaction, locks the session's row and runs reads, in one
// exchange, and refuses a session that is missing (NOT_FOUND) or expired
// (SESSION_EXPIRED). The caller must end the write with Commit or Rollback;
// deferring Rollback is safe after Commit.
func (s *Store) Begin(ctx context.Context, sessionID uuid.UUID, reads ...Read) (*Tx, error) {
	t, err := s.connect(ctx)
	if err != nil {
		return nil, err
	}
	b := &pgx.Batch{}
	b.Queue("begin")
	var locked *ent.Session
	if s.typedLock() {
		query, args, err := s.lockStatement(ctx, sessionID)
		if err != nil {
			t.Rollback()
			return nil, err
		}
		b.Queue(query, args...).Query(func(rows pgx.Rows) (err error) {
			locked, err = lockedRow(rows)
			return err
		})
		for _, r := range reads {
			b.Queue(r.SQL, r.Args...).Query(r.Rows)
		}
	}
	err = s.exchange(ctx, dbhook.Batch, "", t.sending(b))
	if err == nil && locked == nil {
		// Interceptors the store was not told of: the lock goes through
		// ent's query, which applies them, and the reads after it.
		if locked, err = t.Tx.Session.Query().Where(session.ID(sessionID)).ForUpdate().Only(ctx); err == nil && len(reads) > 0 {
			b = &pgx.Batch{}
			for _, r := range reads {
				b.Queue(r.SQL, r.Args...).Query(r.Rows)
			}
			err = s.exchange(ctx, dbhook.Batch, "", t.sending(b))
		}
	}
	now := s.now().UTC()
	switch {
	case ent.IsNotFound(err):
		err = apperr.New(apperr.NotFound, "session %s not found", sessionID)
	case err == nil && expired(locked, now):
		err = apperr.New(apperr.SessionExpired,
			"session %s expired at %s; open a new session with the same external key to continue",
			sessionID, locked.ExpiresAt.UTC().Format(time.RFC3339))
	}
	if err != nil {
		t.Rollback()
		return nil, err
	}
	t.Session, t.Now = locked, now
	t.update = t.WithCommit.Session.Update().Where(session.ID(locked.ID))
	return t, nil
}

// connect takes a connection from the pool for a write, with ent on it.
func (s *Store) connect(ctx context.Context) (*Tx, error) {
	var conn *sql.Conn
	if err := s.exchange(ctx, dbhook.Batch, "", func(ctx context.Context) (err error) {
		conn, err = s.db.Conn(ctx)
		return err
	}); err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	var pg *pgx.Conn
	if err := conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("store: the pool's driver is %T, not pgx's stdlib", dc)
		}
		pg = c.Conn()
		return nil
	}); err != nil {
		_ = conn.Close()
		return nil, err
	}
	// The connection is the write's until Commit or Rollback returns it:
	// ent's statements and the batches go to it one after the other, never
	// at once.
	tx, err := s.open(onConn{entsql.Conn{ExecQuerier: conn}}).Tx(ctx)
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	commits := new([]statement)
	return &Tx{Tx: tx, WithCommit: ent.NewClient(ent.Driver(builder{commits})), store: s, ctx: ctx, conn: conn, pg: pg,
		commits: commits}, nil
}

// sending is the exchange of b, for the store's hook to run: it sends b
// and reads its answers, the first error being the exchange's (PostgreSQL
// skips what follows it). Begin, Flush and Commit make their exchanges
// themselves, through the hook, one call above the driver.
func (t *Tx) sending(b *pgx.Batch) func(context.Context) error {
	return func(ctx context.Context) error { return t.pg.SendBatch(ctx, b).Close() }
}

// Update returns the pending update of the session row, saved once by
// Commit together with the activity stamps and the events, so that a
// change costs no extra statement. (It is ent's update-by-predicate
// builder: UpdateOne would read the row back.)
func (t *Tx) Update() *ent.SessionUpdate { return t.update }

// ExecWithCommit queues a statement for Commit's exchange, as WithCommit
// does for ent's.
func (t *Tx) ExecWithCommit(query string, args ...any) {
	*t.commits = append(*t.commits, statement{query: query, args: args})
}

// Flush sends the statements queued for the commit now, and reads after
// them, in one exchange: for a write that carries several operations
// (a turn's closing writes), each reading what the ones before it wrote.
func (t *Tx) Flush(ctx context.Context, reads ...Read) error {
	b := &pgx.Batch{}
	for _, st := range *t.commits {
		b.Queue(st.query, st.args...)
	}
	*t.commits = (*t.commits)[:0]
	for _, r := range reads {
		b.Queue(r.SQL, r.Args...).Query(r.Rows)
	}
	if b.Len() == 0 {
		return nil
	}
	return t.store.exchange(ctx, dbhook.Batch, "", t.sending(b))
}

// Rollback ends the write without a change; after Commit it does nothing.
func (t *Tx) Rollback() {
	if t.ended {
		return
	}
	t.ended = true
	if !t.pg.IsClosed() && t.pg.PgConn().TxStatus() != 'I' {
		if err := t.store.exchange(context.WithoutCancel(t.ctx), dbhook.Batch, "", func(ctx context.Context) error {
			_, err := t.pg.Exec(ctx, "rollback")
			return err
		}); err != nil {
			// Never back to the pool in a transaction: the pool drops a
			// closed connection.
			_ = t.pg.Close(context.Background())
		}
	}
	_ = t.conn.Close()
}

// Commit ends the write: it saves the session's update with the activity
// stamps and m's events in one statement, after the statements built for
// the commit, and COMMIT, in one exchange; then it rings the doorbell. It
// returns the session as committed when m asks for it (else nil). On an
// error nothing of the write remains, and nothing can run in it after.
func (t *Tx) Commit(ctx context.Context, m Mutation) (out *ent.Session, err error) {
	if t.ended {
		return nil, errors.New("store: the write has ended already")
	}
	defer t.Rollback() // after a commit, only returns the connection
	if len(m.Events) == 0 {
		return nil, errors.New("store: a change must name its event")
	}
	current := t.Session.CurrentTurn
	if n, ok := t.update.Mutation().CurrentTurn(); ok { // a turn began
		current = n
	}
	events := make([]sessionEvent, len(m.Events))
	for i, ev := range m.Events {
		events[i] = sessionEvent{session: t.Session, sequence: t.Session.EventSequence + 1 + int64(i), current: current, Event: ev}
	}
	prefix, err := newEventsBefore(events, t.Now)
	if err != nil {
		return nil, err
	}
	// The events ride on the session's update: one statement for both.
	t.update.SetEventSequence(events[len(events)-1].sequence).Modify(func(u *entsql.UpdateBuilder) {
		u.Prefix(prefix)
	})
	t.stamp(m.Activity)
	if err := t.update.Exec(ctx); err != nil { // built, not sent
		return nil, err
	}
	b := &pgx.Batch{}
	for _, st := range *t.commits {
		b.Queue(st.query, st.args...)
	}
	if m.ReadBack {
		b.Queue(readStatement, t.Session.ID).Query(func(rows pgx.Rows) (err error) {
			out, err = lockedRow(rows)
			return err
		})
	}
	b.Queue("commit").Exec(func(tag pgconn.CommandTag) error {
		if tag.String() != "COMMIT" {
			return pgx.ErrTxCommitRollback
		}
		return nil
	})
	if err := t.store.exchange(ctx, dbhook.Batch, "", t.sending(b)); err != nil {
		return nil, err
	}
	t.ended = true
	_ = t.conn.Close()
	t.store.rang(events)
	return out, nil
}

// stamp sets the activity timestamps on the session's update; the TTL is
// read from the update so that a new TTL counts now.
func (t *Tx) stamp(a Activity) {
	ttl := t.Session.TTLSeconds
	if v, ok := t.update.Mutation().TTLSeconds(); ok {
		ttl = v
	}
	lifetime := time.Duration(ttl) * time.Second
	switch a {
	case Started:
		t.update.SetExpiresAt(t.Now.Add(lifetime))
	case Failed:
		t.update.SetExpiresAt(t.Session.LastActiveAt.Add(lifetime))
	default:
		t.update.SetLastActiveAt(t.Now).SetExpiresAt(t.Now.Add(lifetime))
	}
}
