// Package pipedb is the database/sql driver of the server's pool: pgx's
// stdlib driver, except that a transaction costs no round trip of its own
// at either end. BEGIN is not sent when database/sql begins a transaction
// but together with the transaction's first statement, and COMMIT goes
// together with the statement a caller marks as the transaction's last
// (CommitWith): each pair is one pipelined exchange (one write, one
// answer), in PostgreSQL's extended protocol with one Sync, so that
// PostgreSQL runs them in order and skips what follows an error. ent and
// database/sql see an ordinary driver: a write that marks nothing behaves
// as with pgx's stdlib, one round trip less.
//
// What a write keeps: the statements run in the same transaction in the
// same order; an error in any of them leaves nothing committed (PostgreSQL
// skips the COMMIT after a failed statement, and the caller's rollback ends
// the failed transaction); a commit counts as done only when PostgreSQL
// answered COMMIT, so a connection lost after the send reports an error,
// never a success.
package pipedb

import (
	"bytes"
	"container/list"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"
)

// OpenDB opens a pool on config whose transactions begin and commit as
// the package says; opts are pgx stdlib's.
func OpenDB(config pgx.ConnConfig, opts ...stdlib.OptionOpenDB) *sql.DB {
	return sql.OpenDB(connector{inner: stdlib.GetConnector(config, opts...)})
}

type commitKey struct{}

// CommitWith marks ctx so that the statement run with it commits the
// transaction it runs in, in the same exchange, when the pool is this
// package's and the statement is an Exec in a transaction it began; any
// other driver, or a Query, ignores the mark and the caller's Commit
// commits as usual. After a carried commit the transaction's Commit does
// nothing and answers nil. The caller must run nothing more in the
// transaction after the marked statement.
func CommitWith(ctx context.Context) context.Context {
	return context.WithValue(ctx, commitKey{}, true)
}

func committing(ctx context.Context) bool {
	v, _ := ctx.Value(commitKey{}).(bool)
	return v
}

type laterKey struct{}

// Later marks ctx so that an Exec run with it in a transaction is not sent
// at once but with the transaction's next exchange, ahead of that
// exchange's statement (or of its COMMIT): it costs no round trip of its
// own. Its error, if it has one, is the answer of that next statement or
// Commit, and nothing after it runs. Its Result knows no row count
// (RowsAffected answers an error). For a statement whose caller needs
// nothing back but the error, and can take the error from what follows.
// Any other driver ignores the mark and runs the statement at once.
func Later(ctx context.Context) context.Context {
	return context.WithValue(ctx, laterKey{}, true)
}

func later(ctx context.Context) bool {
	v, _ := ctx.Value(laterKey{}).(bool)
	return v
}

// errLater is the row count of a statement sent later.
var errLater = errors.New("pipedb: the statement was sent later (pipedb.Later): its row count is not known")

type laterResult struct{}

func (laterResult) LastInsertId() (int64, error) { return 0, errLater }
func (laterResult) RowsAffected() (int64, error) { return 0, errLater }

type aheadKey struct{}

// ahead is a read sent ahead of its caller's Query (ReadAhead).
type ahead struct {
	query string
	args  []any
}

// ReadAhead marks ctx so that the exchange that begins a transaction (its
// first statement, run with ctx) also sends query with args after that
// statement, and keeps the rows: the transaction's next statement, when it
// is a Query of the same text and arguments, is answered with them and
// costs no round trip. Any other statement first drops them (what they
// read may no longer be what a read then would) and runs as usual. For a
// read a write makes right after its first statement, whose arguments it
// knows before it: a lock, then the rows the lock guards, read after the
// lock is held (PostgreSQL runs the two in order, each with its own
// snapshot). Its error, if it has one, is the answer of that Query. Any
// other driver ignores the mark.
func ReadAhead(ctx context.Context, query string, args ...any) context.Context {
	return context.WithValue(ctx, aheadKey{}, &ahead{query: query, args: args})
}

func readAhead(ctx context.Context) *ahead {
	a, _ := ctx.Value(aheadKey{}).(*ahead)
	return a
}

// aheadRows are the rows (or the error) of a read sent ahead, with the
// statement and arguments they answer.
type aheadRows struct {
	stmt bound
	rows *bufferedRows
	err  error
}

// answers reports whether the rows answer stmt: the same prepared
// statement with the same arguments, encoded alike.
func (a *aheadRows) answers(stmt bound) bool {
	if a.stmt.prepared != stmt.prepared || len(a.stmt.params) != len(stmt.params) || !slices.Equal(a.stmt.formats, stmt.formats) {
		return false
	}
	for i, p := range stmt.params {
		if (p == nil) != (a.stmt.params[i] == nil) || !bytes.Equal(p, a.stmt.params[i]) {
			return false
		}
	}
	return true
}

type counterKey struct{}

// CountRoundTrips returns ctx with n counting the round trips this
// package's connections make for statements run with it: a statement,
// BEGIN with the statement it goes with, a statement with the COMMIT it
// carries, a COMMIT or ROLLBACK of its own are one each. A transaction's
// COMMIT and ROLLBACK count on the context that began it. Preparing a
// statement the first time a connection sees it is not counted.
func CountRoundTrips(ctx context.Context, n *atomic.Int64) context.Context {
	return context.WithValue(ctx, counterKey{}, n)
}

func count(ctx context.Context) {
	if n, ok := ctx.Value(counterKey{}).(*atomic.Int64); ok {
		n.Add(1)
	}
}

type connector struct{ inner driver.Connector }

func (c connector) Connect(ctx context.Context) (driver.Conn, error) {
	dc, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &conn{Conn: dc.(*stdlib.Conn), statements: map[string]*list.Element{}, lru: list.New()}, nil
}

func (c connector) Driver() driver.Driver { return c.inner.Driver() }

// statementCacheSize bounds the statements a connection keeps prepared for
// its pipelined exchanges (pgx's own cache serves the others).
const statementCacheSize = 256

// conn is pgx's stdlib connection with lazily begun transactions.
type conn struct {
	*stdlib.Conn
	tx *tx

	// statements are the connection's prepared statements by text, most
	// recently used first in lru; evicted names are closed with the next
	// exchange that begins a transaction.
	statements map[string]*list.Element
	lru        *list.List
	serial     int
	evicted    []string

	// queued are the statements marked Later, to go with the transaction's
	// next exchange.
	queued []bound

	// ahead is the read sent ahead of the transaction's next statement
	// (ReadAhead), or nil.
	ahead *aheadRows

	// begin and commit are BEGIN and COMMIT prepared on the connection
	// (outside the cache of statements: every exchange may need them), so
	// that PostgreSQL does not parse them for every transaction.
	begin, commit *pgconn.StatementDescription
}

// bound is a prepared statement with its arguments encoded.
type bound struct {
	*prepared
	params  [][]byte
	formats []int16
}

// prepared is a statement the connection prepared, with the result
// formats pipedb asks for (resultFormats) and its rows' fields in them,
// computed once.
type prepared struct {
	sd      *pgconn.StatementDescription
	results []int16
	fields  []pgconn.FieldDescription
}

type txState int

const (
	pending txState = iota // BEGIN not sent yet
	open                   // BEGIN sent, not ended
	ended                  // committed by a carried COMMIT, or never begun
)

type tx struct {
	c     *conn
	ctx   context.Context
	state txState
}

func (c *conn) Begin() (driver.Tx, error) { return c.BeginTx(context.Background(), driver.TxOptions{}) }

// BeginTx begins a transaction without a round trip: BEGIN goes with the
// first statement. A transaction with an isolation level or read-only
// begins as pgx's stdlib begins it.
func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if opts.Isolation != driver.IsolationLevel(sql.LevelDefault) || opts.ReadOnly {
		count(ctx)
		return c.Conn.BeginTx(ctx, opts)
	}
	if c.Conn.Conn().IsClosed() {
		return nil, driver.ErrBadConn
	}
	c.tx = &tx{c: c, ctx: ctx}
	return c.tx, nil
}

func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	c.ahead = nil
	t := c.tx
	if t == nil || t.state == ended {
		count(ctx)
		return c.Conn.ExecContext(ctx, query, args)
	}
	if later(ctx) && !committing(ctx) {
		b, err := c.bind(ctx, query, args)
		if err != nil {
			return nil, err
		}
		c.queued = append(c.queued, b)
		return laterResult{}, nil
	}
	if t.state == open && len(c.queued) == 0 && !committing(ctx) {
		count(ctx)
		return c.Conn.ExecContext(ctx, query, args)
	}
	b, err := c.bind(ctx, query, args)
	if err != nil {
		return nil, err
	}
	tag, _, err := c.exchange(ctx, &b, false, committing(ctx))
	if err != nil {
		return nil, err
	}
	return driver.RowsAffected(tag.RowsAffected()), nil
}

func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if a := c.ahead; a != nil {
		c.ahead = nil
		b, err := c.bind(ctx, query, args)
		if err != nil {
			return nil, err
		}
		if a.answers(b) {
			if a.err != nil {
				return nil, a.err
			}
			return a.rows, nil
		}
	}
	t := c.tx
	if t == nil || t.state == ended || (t.state == open && len(c.queued) == 0) {
		count(ctx)
		return c.Conn.QueryContext(ctx, query, args)
	}
	b, err := c.bind(ctx, query, args)
	if err != nil {
		return nil, err
	}
	_, rows, err := c.exchange(ctx, &b, true, false)
	if err != nil {
		return nil, err
	}
	return rows, nil
}

// PrepareContext prepares as pgx's stdlib does; a pending BEGIN is sent
// first, since the prepared statement runs on pgx's connection directly.
func (c *conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	c.ahead = nil
	if err := c.beginNow(ctx); err != nil {
		return nil, err
	}
	return c.Conn.PrepareContext(ctx, query)
}

func (c *conn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// beginNow sends a pending BEGIN and the statements queued for later, by
// themselves.
func (c *conn) beginNow(ctx context.Context) error {
	if c.tx == nil || (c.tx.state != pending && len(c.queued) == 0) {
		return nil
	}
	_, _, err := c.exchange(ctx, nil, false, false)
	return err
}

// bind prepares query (see prepare) and encodes its arguments.
func (c *conn) bind(ctx context.Context, query string, argsV []driver.NamedValue) (bound, error) {
	args := make([]any, len(argsV))
	for i, v := range argsV {
		args[i] = v.Value
	}
	return c.bindValues(ctx, query, args)
}

// bindValues is bind of arguments as database/sql passes them on to pgx's
// stdlib, which takes every value as it is (its CheckNamedValue converts
// nothing).
func (c *conn) bindValues(ctx context.Context, query string, args []any) (bound, error) {
	pc := c.Conn.Conn()
	if pc.IsClosed() {
		return bound{}, driver.ErrBadConn
	}
	ps, err := c.prepare(ctx, query)
	if err != nil {
		return bound{}, err
	}
	var eqb pgx.ExtendedQueryBuilder
	if err := eqb.Build(pc.TypeMap(), ps.sd, args); err != nil {
		return bound{}, err
	}
	return bound{prepared: ps, params: eqb.ParamValues, formats: eqb.ParamFormats}, nil
}

// exchange sends, as one pipelined exchange of the transaction: its BEGIN
// when still pending, the statements queued for later, stmt (if any) and
// a COMMIT when commit; and returns stmt's command tag and, when rows, its
// rows. The first error of any of them is the answer; PostgreSQL runs
// nothing after it.
func (c *conn) exchange(ctx context.Context, stmt *bound, rows, commit bool) (_ pgconn.CommandTag, _ *bufferedRows, err error) {
	pc := c.Conn.Conn()
	t := c.tx
	if pc.IsClosed() {
		t.state, c.queued = ended, c.queued[:0]
		return pgconn.CommandTag{}, nil, driver.ErrBadConn
	}
	begin := t.state == pending
	// The read sent ahead is bound (and prepared, the first time) before the
	// pipeline starts. One the caller cannot bind is not sent: its Query
	// meets the same error when it runs.
	var sentAhead *aheadRows
	if a := readAhead(ctx); a != nil && begin && stmt != nil && !commit {
		if b, err := c.bindValues(ctx, a.query, a.args); err == nil {
			sentAhead = &aheadRows{stmt: b}
		}
	}

	if begin && c.begin == nil {
		if c.begin, err = pc.PgConn().Prepare(ctx, "pipedb_begin", "begin", nil); err != nil {
			return pgconn.CommandTag{}, nil, err
		}
	}
	if commit && c.commit == nil {
		if c.commit, err = pc.PgConn().Prepare(ctx, "pipedb_commit", "commit", nil); err != nil {
			return pgconn.CommandTag{}, nil, err
		}
	}

	count(ctx)
	p := pc.PgConn().StartPipeline(ctx)
	step := 0 // the result readers the pipeline will answer, in order
	if begin {
		for _, name := range c.evicted {
			p.SendDeallocate(name)
		}
		c.evicted = c.evicted[:0]
		p.SendQueryStatement(c.begin, nil, nil, nil)
		step++
	}
	for _, q := range c.queued {
		p.SendQueryStatement(q.sd, q.params, q.formats, q.results)
		step++
	}
	c.queued = c.queued[:0]
	stmtStep, commitStep, aheadStep := -1, -1, -1
	if stmt != nil {
		p.SendQueryStatement(stmt.sd, stmt.params, stmt.formats, stmt.results)
		stmtStep = step
		step++
	}
	if sentAhead != nil {
		p.SendQueryStatement(sentAhead.stmt.sd, sentAhead.stmt.params, sentAhead.stmt.formats, sentAhead.stmt.results)
		aheadStep = step
		step++
	}
	if commit {
		p.SendQueryStatement(c.commit, nil, nil, nil)
		commitStep = step
	}

	var (
		first   error
		tag     pgconn.CommandTag
		out     *bufferedRows
		commits bool
	)
	if first = p.Sync(); first == nil {
		step = 0
	read:
		for {
			res, err := p.GetResults()
			if err != nil {
				var pgErr *pgconn.PgError
				switch {
				case !errors.As(err, &pgErr):
					if first == nil {
						first = err
					}
					break read
				case step == aheadStep:
					sentAhead.err = err // the read's error is its Query's answer
					step++
				case first == nil:
					first = err
				}
				continue
			}
			switch r := res.(type) {
			case nil, *pgconn.PipelineSync:
				break read
			case *pgconn.ResultReader:
				switch {
				case step == stmtStep && rows:
					out = buffer(pc.TypeMap(), stmt.fields, r)
				case step == aheadStep:
					sentAhead.rows = buffer(pc.TypeMap(), sentAhead.stmt.fields, r)
				}
				ct, err := r.Close()
				if step == aheadStep {
					// The read's error is its Query's answer, not this one's.
					sentAhead.err = err
					step++
					continue
				}
				if err != nil && first == nil {
					first = err
				}
				switch step {
				case stmtStep:
					tag = ct
				case commitStep:
					commits = ct.String() == "COMMIT"
				}
				step++
			}
		}
	}
	if err := p.Close(); err != nil && first == nil {
		first = err
	}

	switch {
	case pc.IsClosed(), pc.PgConn().TxStatus() == 'I':
		// Gone, committed, or BEGIN failed: nothing to end.
		t.state = ended
	default:
		t.state = open
	}
	if first != nil {
		return pgconn.CommandTag{}, nil, first
	}
	if sentAhead != nil && (sentAhead.rows != nil || sentAhead.err != nil) {
		c.ahead = sentAhead
	}
	if commit && !commits {
		return pgconn.CommandTag{}, nil, pgx.ErrTxCommitRollback
	}
	return tag, out, nil
}

// prepare returns query as prepared on the connection, preparing it the
// first time (a round trip of its own, outside the exchange that runs it).
func (c *conn) prepare(ctx context.Context, query string) (*prepared, error) {
	if e, ok := c.statements[query]; ok {
		c.lru.MoveToFront(e)
		return e.Value.(*prepared), nil
	}
	c.serial++
	sd, err := c.Conn.Conn().PgConn().Prepare(ctx, "pipedb_"+strconv.Itoa(c.serial), query, nil)
	if err != nil {
		return nil, err
	}
	ps := &prepared{sd: sd, results: resultFormats(sd.Fields), fields: slices.Clone(sd.Fields)}
	for i := range ps.fields {
		ps.fields[i].Format = ps.results[i]
	}
	c.statements[query] = c.lru.PushFront(ps)
	if c.lru.Len() > statementCacheSize {
		old := c.lru.Remove(c.lru.Back()).(*prepared)
		delete(c.statements, old.sd.SQL)
		c.evicted = append(c.evicted, old.sd.Name)
	}
	return ps, nil
}

// Commit commits the transaction unless a statement carried its COMMIT
// or it never began; statements queued for later go with the COMMIT.
func (t *tx) Commit() error {
	c := t.c
	c.ahead = nil
	if len(c.queued) > 0 && t.state != ended {
		_, _, err := c.exchange(t.ctx, nil, false, true)
		if err != nil && t.state == open {
			_ = t.Rollback() // database/sql ends the transaction on any answer
		}
		c.tx = nil
		return err
	}
	c.tx = nil
	if t.state != open {
		return nil
	}
	t.state = ended
	count(t.ctx)
	pc := c.Conn.Conn()
	tag, err := pc.Exec(t.ctx, "commit")
	if err != nil {
		if pc.PgConn().TxStatus() != 'I' {
			_ = pc.Close(t.ctx)
		}
		return err
	}
	if tag.String() == "ROLLBACK" {
		return pgx.ErrTxCommitRollback
	}
	return nil
}

// Rollback rolls the transaction back, if it began and has not ended;
// statements queued for later are never sent.
func (t *tx) Rollback() error {
	c := t.c
	c.tx, c.queued, c.ahead = nil, c.queued[:0], nil
	if t.state != open {
		return nil
	}
	t.state = ended
	pc := c.Conn.Conn()
	if pc.IsClosed() {
		return driver.ErrBadConn
	}
	if pc.PgConn().TxStatus() == 'I' {
		return nil
	}
	count(t.ctx)
	if _, err := pc.Exec(t.ctx, "rollback"); err != nil {
		_ = pc.Close(t.ctx)
		return err
	}
	return nil
}

// buffer reads r's rows whole, their bytes copied out of pgx's buffer:
// each row's values into one allocation, a NULL left nil. fields are the
// statement's (prepared's, which pgx's reader copies for every result).
func buffer(m *pgtype.Map, fields []pgconn.FieldDescription, r *pgconn.ResultReader) *bufferedRows {
	out := &bufferedRows{m: m, fields: fields}
	for r.NextRow() {
		values := r.Values()
		size := 0
		for _, v := range values {
			size += len(v)
		}
		data := make([]byte, 0, size)
		row := make([][]byte, len(values))
		for i, v := range values {
			if v != nil {
				at := len(data)
				data = append(data, v...)
				row[i] = data[at:len(data):len(data)]
			}
		}
		out.rows = append(out.rows, row)
	}
	return out
}

// resultFormats asks for the formats pgx's stdlib asks for, so that a
// column reaches database/sql as the same value either way.
func resultFormats(fields []pgconn.FieldDescription) []int16 {
	formats := make([]int16, len(fields))
	for i, f := range fields {
		switch f.DataTypeOID {
		case pgtype.BoolOID, pgtype.ByteaOID, pgtype.CIDOID, pgtype.DateOID, pgtype.Float4OID,
			pgtype.Float8OID, pgtype.Int2OID, pgtype.Int4OID, pgtype.Int8OID, pgtype.OIDOID,
			pgtype.TimestampOID, pgtype.TimestamptzOID, pgtype.XIDOID:
			formats[i] = 1
		}
	}
	return formats
}

// bufferedRows are the rows of a pipelined exchange, read whole before the
// exchange ended, converted to database/sql values as pgx's stdlib
// converts them.
type bufferedRows struct {
	m      *pgtype.Map
	fields []pgconn.FieldDescription
	rows   [][][]byte
	next   int
}

func (r *bufferedRows) Columns() []string {
	names := make([]string, len(r.fields))
	for i, f := range r.fields {
		names[i] = f.Name
	}
	return names
}

func (r *bufferedRows) ColumnTypeDatabaseTypeName(i int) string {
	if t, ok := r.m.TypeForOID(r.fields[i].DataTypeOID); ok {
		return strings.ToUpper(t.Name)
	}
	return strconv.FormatInt(int64(r.fields[i].DataTypeOID), 10)
}

func (r *bufferedRows) Close() error { r.next = len(r.rows); return nil }

func (r *bufferedRows) Next(dest []driver.Value) error {
	if r.next >= len(r.rows) {
		return io.EOF
	}
	row := r.rows[r.next]
	r.next++
	for i, raw := range row {
		if raw == nil {
			dest[i] = nil
			continue
		}
		v, err := value(r.m, r.fields[i], raw)
		if err != nil {
			return fmt.Errorf("convert field %d failed: %w", i, err)
		}
		dest[i] = v
	}
	return nil
}

// value converts one column's bytes as pgx's stdlib Rows.Next does.
func value(m *pgtype.Map, f pgconn.FieldDescription, src []byte) (driver.Value, error) {
	scan := func(target any) error {
		return m.PlanScan(f.DataTypeOID, f.Format, target).Scan(src, target)
	}
	valuer := func(target interface {
		Value() (driver.Value, error)
	}) (driver.Value, error) {
		if err := scan(target); err != nil {
			return nil, err
		}
		return target.Value()
	}
	switch f.DataTypeOID {
	case pgtype.BoolOID:
		var d bool
		err := scan(&d)
		return d, err
	case pgtype.ByteaOID, pgtype.JSONOID, pgtype.JSONBOID, pgtype.XMLOID:
		var d []byte
		if err := scan(&d); err != nil {
			return nil, err
		}
		return d, nil
	case pgtype.CIDOID, pgtype.OIDOID, pgtype.XIDOID:
		return valuer(&pgtype.Uint32{})
	case pgtype.DateOID:
		return valuer(&pgtype.Date{})
	case pgtype.Float4OID:
		var d float32
		err := scan(&d)
		return float64(d), err
	case pgtype.Float8OID:
		var d float64
		err := scan(&d)
		return d, err
	case pgtype.Int2OID:
		var d int16
		err := scan(&d)
		return int64(d), err
	case pgtype.Int4OID:
		var d int32
		err := scan(&d)
		return int64(d), err
	case pgtype.Int8OID:
		var d int64
		err := scan(&d)
		return d, err
	case pgtype.TimestampOID:
		return valuer(&pgtype.Timestamp{})
	case pgtype.TimestamptzOID:
		return valuer(&pgtype.Timestamptz{})
	default:
		var d string
		err := scan(&d)
		return d, err
	}
}
