package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/lib/pq"

	"sessiongraph/ent"
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
	ContextReceipts []json.RawMessage `json:"contextReceipts"`
	Events          []json.RawMessage `json:"events"`
}

// ExportFormat names the document's format.
const ExportFormat = "sessiongraph.session/v1"

// transferred are the session's tables in the order an import writes them
// (a row's references first), with the document's list of each.
func (x *Export) transferred() []struct {
	table string
	rows  *[]json.RawMessage
} {
	return []struct {
		table string
		rows  *[]json.RawMessage
	}{
		{"session_keys", &x.SessionKeys}, {"turns", &x.Turns}, {"refs", &x.Refs}, {"artifacts", &x.Artifacts},
		{"step_results", &x.StepResults}, {"context_receipts", &x.ContextReceipts},
	}
}

// ExportSession reads the session's rows in one statement, so one snapshot:
// the document is a state the session was in. The caller has checked that
// its principal may read the session (the statement is below ent's tenant
// confinement).
func (s *Store) ExportSession(ctx context.Context, id uuid.UUID, schemaVersion uint) (*Export, error) {
	x := &Export{Format: ExportFormat, SchemaVersion: schemaVersion}
	lists := x.transferred()
	query := `SELECT (SELECT to_jsonb(s) FROM sessions s WHERE s.id = $1)`
	for _, l := range lists {
		query += fmt.Sprintf(`, COALESCE((SELECT jsonb_agg(to_jsonb(r) ORDER BY r.id) FROM %s r WHERE r.session_id = $1), '[]')`,
			pq.QuoteIdentifier(l.table))
	}
	query += `, COALESCE((SELECT jsonb_agg(to_jsonb(r) ORDER BY r.sequence) FROM events r WHERE r.session_id = $1), '[]')`
	var session []byte
	raw := make([][]byte, len(lists)+1)
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
	for i, l := range lists {
		if err := json.Unmarshal(raw[i], l.rows); err != nil {
			return nil, err
		}
	}
	if err := json.Unmarshal(raw[len(lists)], &x.Events); err != nil {
		return nil, err
	}
	return x, rows.Err()
}

// ImportSession writes an exported session into this database in one
// transaction: every row as it was, the events with their numbers, kinds,
// payloads and times, then one session.imported event after them. The
// session must not exist here (CONFLICT), nor, if it is live, another live
// session of its key.
func (s *Store) ImportSession(ctx context.Context, x *Export) (uuid.UUID, error) {
	var head struct {
		ID            uuid.UUID `json:"id"`
		Tenant        string    `json:"tenant"`
		EventSequence int64     `json:"event_sequence"`
	}
	if err := json.Unmarshal(x.Session, &head); err != nil || head.ID == uuid.Nil {
		return uuid.Nil, apperr.Invalid("session", "the document's session is not a session row: %v", err)
	}
	err := s.inTx(ctx, func(tx *ent.Tx, now time.Time) ([]sessionEvent, error) {
		if err := populate(ctx, tx, "sessions", []json.RawMessage{x.Session}); err != nil {
			return nil, err
		}
		for _, l := range x.transferred() {
			if err := populate(ctx, tx, l.table, *l.rows); err != nil {
				return nil, err
			}
		}
		// The events keep what they were; their feed position is this
		// transaction's, as any new event's (docs/events.md).
		events, err := json.Marshal(nonNilRows(x.Events))
		if err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO events (id, session_id, sequence, xid, tenant, kind, payload, created_at)
			SELECT r.id, r.session_id, r.sequence, pg_current_xact_id()::text::bigint, r.tenant, r.kind, r.payload, r.created_at
			FROM jsonb_populate_recordset(NULL::events, $1::jsonb) AS r`, string(events)); err != nil {
			return nil, conflictOrInvalid("events", err)
		}
		imported := &ent.Session{ID: head.ID, Tenant: head.Tenant, EventSequence: head.EventSequence}
		ev := nextEvent(imported, Event{Kind: KindSessionImported, Payload: map[string]any{"events": len(x.Events)}})
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET event_sequence = $2 WHERE id = $1`, head.ID, ev.sequence); err != nil {
			return nil, err
		}
		return []sessionEvent{ev}, nil
	})
	return head.ID, err
}

// populate inserts rows, each a row of table as JSON, column by column.
func populate(ctx context.Context, tx *ent.Tx, table string, rows []json.RawMessage) error {
	if len(rows) == 0 {
		return nil
	}
	body, err := json.Marshal(rows)
	if err != nil {
		return err
	}
	t := pq.QuoteIdentifier(table)
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`INSERT INTO %s SELECT * FROM jsonb_populate_recordset(NULL::%s, $1::jsonb)`, t, t), string(body)); err != nil {
		return conflictOrInvalid(table, err)
	}
	return nil
}

// conflictOrInvalid names what PostgreSQL refused in an import: a row
// that exists already is CONFLICT, a row that does not fit its table
// BAD_USER_INPUT.
func conflictOrInvalid(table string, err error) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return err
	}
	switch {
	case pgErr.Code == "23505": // unique_violation
		return apperr.New(apperr.Conflict, "importing %s: a row exists already (%s): the session, or a live session of its key, is in this database", table, pgErr.ConstraintName)
	case pgErr.Code[:2] == "22" || pgErr.Code[:2] == "23": // data exception, integrity constraint
		return apperr.Invalid(table, "importing %s: %s", table, pgErr.Message)
	}
	return err
}

func nonNilRows(rows []json.RawMessage) []json.RawMessage {
	if rows == nil {
		return []json.RawMessage{}
	}
	return rows
}
