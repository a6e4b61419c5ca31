package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/lib/pq"

	"sessiongraph/ent"
	"sessiongraph/ent/apikey"
	"sessiongraph/ent/artifact"
	"sessiongraph/ent/contextreceipt"
	"sessiongraph/ent/entitytype"
	"sessiongraph/ent/event"
	"sessiongraph/ent/modelcall"
	"sessiongraph/ent/ref"
	"sessiongraph/ent/session"
	"sessiongraph/ent/sessionkey"
	"sessiongraph/ent/stepresult"
	"sessiongraph/ent/turn"
	"sessiongraph/internal/apperr"
)

// Export is one session as a self-contained document: every row of it, as
// PostgreSQL gives a row as JSON (every column, named as in the schema), at
// the schema version it was read at. Import takes it back.
type Export struct {
	Format          string            `json:"format"`
	SchemaVersion   uint              `json:"schemaVersion"`
	Session         json.RawMessage   `json:"session"`
	SessionKeys     []json.RawMessage `json:"sessionKeys"`
	Turns           []json.RawMessage `json:"turns"`
	Refs            []json.RawMessage `json:"refs"`
	Artifacts       []json.RawMessage `json:"artifacts"`
	StepResults     []json.RawMessage `json:"stepResults"`
	TurnItems       []json.RawMessage `json:"turnItems"`
	ContextReceipts []json.RawMessage `json:"contextReceipts"`
	ModelCalls      []json.RawMessage `json:"modelCalls"`
	Events          []json.RawMessage `json:"events"`
}

// ExportFormat names the document's format.
const ExportFormat = "sessiongraph.session/v1"

// rows is the document's list of transferLists[i].
func (x *Export) rows(i int) *[]json.RawMessage {
	return [...]*[]json.RawMessage{&x.SessionKeys, &x.Turns, &x.Refs, &x.Artifacts, &x.StepResults, &x.TurnItems, &x.ContextReceipts, &x.ModelCalls, &x.Events}[i]
}

// ExportSession reads the session's rows in one statement, so one snapshot:
// the document is a state the session was in. The caller has checked that
// its principal may read the session (the statement is below ent's tenant
// confinement).
func (s *Store) ExportSession(ctx context.Context, id uuid.UUID, schemaVersion uint) (*Export, error) {
	x := &Export{Format: ExportFormat, SchemaVersion: schemaVersion}
	query := `SELECT (SELECT to_jsonb(s) FROM sessions s WHERE s.id = $1)`
	for _, l := range transferLists {
		query += fmt.Sprintf(`, COALESCE((SELECT jsonb_agg(to_jsonb(r) ORDER BY %s) FROM %s r WHERE r.session_id = $1), '[]')`,
			l.order, pq.QuoteIdentifier(l.table))
	}
	var session []byte
	raw := make([][]byte, len(transferLists))
	dest := []any{&session}
	for i := range raw {
		dest = append(dest, &raw[i])
	}
	rows, err := s.client.QueryContext(ctx, query, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	if !rows.Next() {
		return nil, errors.Join(rows.Err(), sql.ErrNoRows)
	}
	if err := rows.Scan(dest...); err != nil {
		return nil, err
	}
	if session == nil {
		return nil, apperr.New(apperr.NotFound, "session %s not found", id)
	}
	x.Session = session
	for i := range transferLists {
		if err := json.Unmarshal(raw[i], x.rows(i)); err != nil {
			return nil, err
		}
	}
	return x, rows.Err()
}

// Imported is what an import wrote: the session, and how many rows of each
// of the document's lists (turns, refs, ...).
type Imported struct {
	ID   uuid.UUID
	Rows map[string]int
}

// An import writes its rows in batches of at most importBatchRows rows
// and about importBatchBytes of JSON: what it holds in memory at once.
const (
	importBatchRows  = 500
	importBatchBytes = 256 << 10
)

// ImportSession writes the session of doc, whose format and version the
// caller has checked and whose session it has read (doc.Session), in one
// transaction, reading the document's rows as it writes them: the session,
// then each list's rows in batches, then one session.imported event after
// the document's events. Every row must be the session's, and every number
// agree with the session's counters (transferLists say how), or nothing is
// written: a refusal names the row and the column. The session must be new
// here (CONFLICT), and so must every id of its rows, and its key must name
// no other session here.
func (s *Store) ImportSession(ctx context.Context, doc *ImportDocument) (Imported, error) {
	head := doc.session
	if head == nil {
		return Imported{}, errors.New("store: an import reads its document's session first")
	}
	out := Imported{ID: head.ID, Rows: map[string]int{}}
	// Its rows span shards, and a failed attempt has read the document:
	// it holds the horizon, and is not tried again.
	err := s.inHeldTx(ctx, func(tx *ent.Tx, now time.Time) ([]sessionEvent, error) {
		im := &importer{ctx: ctx, tx: tx, session: head, rows: out.Rows, refs: map[string]int{}}
		if err := im.begin(doc.sessionRow); err != nil {
			return nil, err
		}
		for {
			l, i, raw, err := doc.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, err
			}
			if err := im.add(l, i, raw); err != nil {
				return nil, err
			}
		}
		if err := im.flush(); err != nil {
			return nil, err
		}
		if err := im.finish(); err != nil {
			return nil, err
		}
		ev := nextEvent(head, Event{Kind: KindSessionImported, Payload: map[string]any{"events": im.events}})
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET event_sequence = $2 WHERE id = $1`, head.ID, ev.sequence); err != nil {
			return nil, err
		}
		return []sessionEvent{ev}, nil
	})
	return out, err
}

// importer is one import in progress, in its transaction.
type importer struct {
	ctx     context.Context
	tx      *ent.Tx
	session *ent.Session // as the document has it
	rows    map[string]int
	// events counts the events read; refs the refs read per counter
	// (recipe, gen_recipe).
	events int64
	refs   map[string]int
	batch  importBatch
}

// importBatch is rows of one list, read and not yet written.
type importBatch struct {
	list  *transferList
	first int // the index of the first in its list
	rows  []json.RawMessage
	keys  []rowKeys
	size  int
	body  []byte
}

// begin writes the session's row, once it knows the session is new here.
func (im *importer) begin(row json.RawMessage) error {
	id := im.session.ID
	var exists, deleted bool
	if err := im.queryRow(`SELECT EXISTS (SELECT 1 FROM sessions WHERE id = $1), EXISTS (SELECT 1 FROM events WHERE session_id = $1)`,
		[]any{id}, &exists, &deleted); err != nil {
		return err
	}
	switch {
	case exists:
		return apperr.New(apperr.Conflict, "session %s exists already in this database", id)
	case deleted:
		return apperr.New(apperr.Conflict, "session %s was deleted from this database, and the event of its deletion remains: a deleted session's id is not used again", id)
	}
	if err := im.newIDs(func(int) string { return "session" }, []rowKeys{{ID: id}}); err != nil {
		return err
	}
	if _, err := im.tx.ExecContext(im.ctx, `INSERT INTO sessions SELECT * FROM jsonb_populate_record(NULL::sessions, $1::jsonb)`, []byte(row)); err != nil {
		return refused("session", err)
	}
	return nil
}

// add checks a row of list l, at index i, and adds it to the batch,
// writing the batch first when it is full or of another list.
func (im *importer) add(l *transferList, i int, raw json.RawMessage) error {
	at := fmt.Sprintf("%s[%d]", l.list, i)
	var k rowKeys
	if err := json.Unmarshal(raw, &k); err != nil {
		return apperr.Invalid(at, "%s is not a row of %s: %v", at, l.table, err)
	}
	if k.SessionID != im.session.ID {
		return apperr.Invalid(at+".session_id", "%s.session_id is %s, not the document's session %s: every row of the document must be its session's",
			at, k.SessionID, im.session.ID)
	}
	if err := l.check(im, at, &k); err != nil {
		return err
	}
	b := &im.batch
	if b.list != l || len(b.rows) >= importBatchRows || b.size >= importBatchBytes {
		if err := im.flush(); err != nil {
			return err
		}
		b.list, b.first = l, i
	}
	b.rows, b.keys, b.size = append(b.rows, raw), append(b.keys, k), b.size+len(raw)
	return nil
}

// flush writes the batch: it refuses ids another row has here, artifacts
// of refs the session lacks, and rows whose unique keys the document holds
// twice (the insert skips them, and the first skipped is named).
func (im *importer) flush() error {
	b := &im.batch
	if len(b.rows) == 0 {
		return nil
	}
	l := b.list
	at := func(i int) string { return fmt.Sprintf("%s[%d]", l.list, b.first+i) }
	if l.table != sessionkey.Table {
		if err := im.newIDs(at, b.keys); err != nil {
			return err
		}
	}
	if l.table == artifact.Table {
		if err := im.artifactRefs(at); err != nil {
			return err
		}
	}
	b.body = append(b.body[:0], '[')
	for i, r := range b.rows {
		if i > 0 {
			b.body = append(b.body, ',')
		}
		b.body = append(b.body, r...)
	}
	b.body = append(b.body, ']')
	written := map[uuid.UUID]int{}
	err := im.query(insertRows(l.table), []any{b.body}, func(rows *sql.Rows) error {
		var id uuid.UUID
		err := rows.Scan(&id)
		written[id]++
		return err
	})
	if err != nil {
		return refused(fmt.Sprintf("%s[%d…%d]", l.list, b.first, b.first+len(b.rows)-1), err)
	}
	for i := range b.keys {
		k := &b.keys[i]
		if written[k.ID] > 0 {
			written[k.ID]--
			continue
		}
		return im.twice(l, at(i), k)
	}
	im.rows[l.list] += len(b.rows)
	b.rows, b.keys, b.size = b.rows[:0], b.keys[:0], 0
	return nil
}

// insertRows is the statement that writes a batch of rows of table, given
// as a JSON array, skipping a row whose unique key another row has, and
// answers the ids it wrote. An event's feed position is this transaction's,
// as any new event's (docs/events.md).
func insertRows(table string) string {
	if table == event.Table {
		return `INSERT INTO events (` + eventColumns + `)
			SELECT r.id, r.session_id, r.sequence, ` + eventXid + `, r.tenant, r.kind, r.payload, r.turn, r.created_at
			FROM jsonb_populate_recordset(NULL::events, $1::jsonb) AS r ON CONFLICT DO NOTHING RETURNING id`
	}
	t := pq.QuoteIdentifier(table)
	return `INSERT INTO ` + t + ` SELECT * FROM jsonb_populate_recordset(NULL::` + t + `, $1::jsonb) ON CONFLICT DO NOTHING RETURNING id`
}

// twice names what a row the insert skipped holds that a row before it
// holds too.
func (im *importer) twice(l *transferList, at string, k *rowKeys) error {
	if l.table != sessionkey.Table {
		q := fmt.Sprintf(`SELECT EXISTS (SELECT 1 FROM %s WHERE session_id = $1 AND id = $2)`, pq.QuoteIdentifier(l.table))
		if found, err := im.exists(q, k.ID); found || err != nil {
			return orErr(err, apperr.Invalid(at, "%s: the document holds the id %s twice", at, k.ID))
		}
	}
	return l.twice(im, at, k)
}

// NodeTable is a table whose rows are Relay nodes, found by their id alone
// (GraphQL's node(id), engine/node.go), and the column that names each
// row's session (NULL::uuid for the tables outside sessions).
type NodeTable struct{ Table, Session string }

// NodeTables are the tables of Relay nodes, sessions first.
var NodeTables = []NodeTable{
	{session.Table, "id"}, {turn.Table, "session_id"}, {ref.Table, "session_id"}, {artifact.Table, "session_id"},
	{stepresult.Table, "session_id"}, {contextreceipt.Table, "session_id"},
	{modelcall.Table, "session_id"}, {event.Table, "session_id"},
	{entitytype.Table, "NULL::uuid"}, {apikey.Table, "NULL::uuid"},
}

// LocateNodes is the statement that finds, of the ids in $1 (a uuid[]),
// each one's table and session, over tables.
func LocateNodes(tables []NodeTable) string {
	parts := make([]string, len(tables))
	for i, t := range tables {
		parts[i] = fmt.Sprintf(`SELECT id, '%s', %s FROM %s WHERE id = ANY($1::uuid[])`, t.Table, t.Session, t.Table)
	}
	return strings.Join(parts, " UNION ALL ")
}

// nodeIDs finds which of a list of ids are ids of nodes here, in which
// table and of which session.
var nodeIDs = LocateNodes(NodeTables)

// newIDs refuses a row whose id is a node's id here: an imported row keeps
// its id, and a node is found by its id alone, so the id must be new. A
// row of this import holding it (written before) is the document's own.
func (im *importer) newIDs(at func(int) string, keys []rowKeys) error {
	ids := make([]uuid.UUID, len(keys))
	for i, k := range keys {
		ids[i] = k.ID
	}
	type holder struct {
		table   string
		session *uuid.UUID
	}
	held := map[uuid.UUID]holder{}
	err := im.query(nodeIDs, []any{ids}, func(rows *sql.Rows) error {
		var id uuid.UUID
		var h holder
		err := rows.Scan(&id, &h.table, &h.session)
		held[id] = h
		return err
	})
	if err != nil || len(held) == 0 {
		return err
	}
	for i, k := range keys {
		h, ok := held[k.ID]
		switch {
		case !ok:
		case h.session != nil && *h.session == im.session.ID:
			return apperr.Invalid(at(i), "%s: the document holds the id %s twice", at(i), k.ID)
		case h.session != nil:
			return apperr.New(apperr.Conflict, "%s.id %s exists already in this database (a row of %s of another session): an imported row keeps its id, which must be new here",
				at(i), k.ID, h.table)
		default:
			return apperr.New(apperr.Conflict, "%s.id %s exists already in this database (a row of %s): an imported row keeps its id, which must be new here",
				at(i), k.ID, h.table)
		}
	}
	return nil
}

// artifactRefs refuses an artifact of the batch whose ref is not a ref of
// the session written before it, or is of another type.
func (im *importer) artifactRefs(at func(int) string) error {
	b := &im.batch
	refs := make([]uuid.UUID, len(b.keys))
	types := make([]string, len(b.keys))
	for i, k := range b.keys {
		refs[i], types[i] = k.RefID, k.EntityType
	}
	var i int
	var refType sql.NullString
	err := im.queryRow(`SELECT a.i - 1, r.entity_type FROM unnest($2::uuid[], $3::text[]) WITH ORDINALITY AS a(ref_id, entity_type, i)
		LEFT JOIN refs r ON r.session_id = $1 AND r.id = a.ref_id
		WHERE r.id IS NULL OR r.entity_type <> a.entity_type ORDER BY a.i LIMIT 1`, []any{im.session.ID, refs, types}, &i, &refType)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return err
	case !refType.Valid:
		return apperr.Invalid(at(i)+".ref_id", "%s.ref_id %s is not a ref of the document: an artifact is the content of one of its session's refs", at(i), refs[i])
	}
	return apperr.Invalid(at(i)+".entity_type", "%s.entity_type is %q, and its ref's is %q", at(i), types[i], refType.String)
}

// finish checks what only the whole document shows: the session's counters
// against the rows numbered by them, the refs its steps name, its key.
func (im *importer) finish() error {
	s := im.session
	if im.events != s.EventSequence {
		return apperr.Invalid("session.event_sequence", "the session's event_sequence is %d but the document holds %d events: its counter numbers its newest event",
			s.EventSequence, im.events)
	}
	for _, c := range []struct {
		prefix   string
		counters map[string]int
	}{{"", s.RefCounters}, {"gen_", s.GenCounters}} {
		types := make([]string, 0, len(c.counters))
		for t := range c.counters {
			types = append(types, t)
		}
		slices.Sort(types)
		for _, t := range types {
			if n, held := c.counters[t], im.refs[c.prefix+t]; n != held {
				return apperr.Invalid("session."+c.prefix+"counters", "the session's counter of %s refs is %d but the document holds %d of them: "+
					"the refs of a type are numbered 1, 2, 3… without gaps up to its counter", c.prefix+t, n, held)
			}
		}
	}
	var turnOf, step sql.NullInt64
	var named string
	err := im.queryRow(`SELECT s.turn, s.step, x.ref FROM step_results s CROSS JOIN LATERAL jsonb_array_elements_text(s.refs) AS x(ref)
		WHERE s.session_id = $1 AND NOT EXISTS (SELECT 1 FROM refs r WHERE r.session_id = $1 AND r.ref = x.ref)
		ORDER BY s.turn, s.step LIMIT 1`, []any{s.ID}, &turnOf, &step, &named)
	switch {
	case err == nil:
		return apperr.Invalid("stepResults", "step %d of turn %d names ref %s, which the document does not hold", step.Int64, turnOf.Int64, named)
	case !errors.Is(err, sql.ErrNoRows):
		return refused("stepResults", err)
	}
	if s.Status == session.StatusActive && im.rows["sessionKeys"] == 0 {
		return apperr.Invalid("sessionKeys", "the session is live and the document holds no key of it: export a live session with its key")
	}
	return nil
}

func (im *importer) query(q string, args []any, scan func(*sql.Rows) error) error {
	rows, err := im.tx.QueryContext(im.ctx, q, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// queryRow scans the one row of q into dest, or answers sql.ErrNoRows.
func (im *importer) queryRow(q string, args []any, dest ...any) error {
	found := false
	err := im.query(q, args, func(rows *sql.Rows) error {
		found = true
		return rows.Scan(dest...)
	})
	if err == nil && !found {
		return sql.ErrNoRows
	}
	return err
}

// exists answers the one boolean of q, whose first argument is the
// session and the rest args.
func (im *importer) exists(q string, args ...any) (bool, error) {
	var found bool
	err := im.queryRow(q, append([]any{im.session.ID}, args...), &found)
	return found, err
}

// refused names what PostgreSQL refused of the rows at: a row that does
// not fit its table is BAD_USER_INPUT, a row another import wrote meanwhile
// CONFLICT.
func refused(at string, err error) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return err
	}
	switch {
	case pgErr.Code == "23505": // unique_violation
		return apperr.New(apperr.Conflict, "importing %s: a row exists already (%s): another import wrote it meanwhile", at, pgErr.ConstraintName)
	case pgErr.Code[:2] == "22" || pgErr.Code[:2] == "23": // data exception, integrity constraint
		return apperr.Invalid(at, "importing %s: %s", at, pgErr.Message)
	}
	return err
}
