package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/ent/session"
)

// The session lock that begins every write is one statement of a fixed
// shape scanned column by column into the session's typed fields: ent's
// generic scan (a scanner allocated per column, the driver's column types
// looked up for every statement, every column matched by name) was a tenth
// of a small write's CPU. The row it gives is ent's read of the same row,
// field for field (TestTypedLockReadsAsEnt), without ent's client: nothing
// queries the locked session's edges (its rows are read through the
// write's Tx).

// ConfinedBy tells the store that client's interceptors on sessions keep a
// query to the tenant scope returns ("" for every tenant), as
// access.Confine's do, and nothing else: Begin then locks the session with
// its own statement, confined alike. A store over a client whose sessions
// have interceptors and that is not told this locks through ent's query,
// so that the interceptors apply.
func ConfinedBy(scope func(context.Context) (string, error)) Option {
	return func(s *Store) { s.scope = scope }
}

// lockColumns are the sessions' columns in ent's order (session.Columns),
// which lockedRow scans in turn.
const lockColumns = `id, tenant, external_key, user_id, domain, status, system_prompt, focus, engagement_summary,
	history_summary, reasoning_summary, pending_clarification, current_turn, tokenizer, token_count, failed_turns,
	ref_counters, gen_counters, metadata, ttl_seconds, created_at, updated_at, last_active_at, expires_at,
	expired_at, event_sequence`

// lockStatements lock a session by id, over every tenant and confined to
// one ($2), as ent's ForUpdate().Only() does (its LIMIT 2 finds nothing
// more on a primary key).
var lockStatements = [2]string{
	`SELECT ` + lockColumns + ` FROM sessions WHERE id = $1 FOR UPDATE`,
	`SELECT ` + lockColumns + ` FROM sessions WHERE id = $1 AND tenant = $2 FOR UPDATE`,
}

// typedLock reports whether Begin may lock with lockRow: no interceptor
// on sessions, or only the tenant confinement the store was told of.
func (s *Store) typedLock() bool {
	return s.scope != nil || len(s.client.Session.Interceptors()) == 0
}

// readStatement reads a session's row as lockStatements do, without the
// lock: a commit's read back, in its own exchange.
const readStatement = `SELECT ` + lockColumns + ` FROM sessions WHERE id = $1`

// lockStatement is the statement that locks session id and reads it, with
// its arguments: confined to the caller's tenant when the store's scope
// names one.
func (s *Store) lockStatement(ctx context.Context, id uuid.UUID) (string, []any, error) {
	args, confined := []any{id}, 0
	if s.scope != nil {
		tenant, err := s.scope(ctx)
		if err != nil {
			return "", nil, err
		}
		if tenant != "" {
			args, confined = append(args, tenant), 1
		}
	}
	return lockStatements[confined], args, nil
}

// rows are pgx's rows or database/sql's.
type rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// lockedRow scans the row of lockColumns rows has, as ent's assignValues
// does: JSON columns decoded when not empty, a NULL expired_at left nil. No
// row (a missing, or for a confined caller another tenant's, session) is
// ent's not-found error.
func lockedRow(rows rows) (*ent.Session, error) {
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, err
		}
		return nil, &ent.NotFoundError{}
	}
	var (
		s                                                  ent.Session
		status                                             string
		focus, pending, refCounters, genCounters, metadata []byte
		current, tokens, failed, ttl                       int64
		expiredAt                                          sql.NullTime
	)
	if err := rows.Scan(&s.ID, &s.Tenant, &s.ExternalKey, &s.UserID, &s.Domain, &status, &s.SystemPrompt, &focus,
		&s.EngagementSummary, &s.HistorySummary, &s.ReasoningSummary, &pending, &current, &s.Tokenizer, &tokens,
		&failed, &refCounters, &genCounters, &metadata, &ttl, &s.CreatedAt, &s.UpdatedAt, &s.LastActiveAt,
		&s.ExpiresAt, &expiredAt, &s.EventSequence); err != nil {
		return nil, err
	}
	s.Status = session.Status(status)
	s.CurrentTurn, s.TokenCount, s.FailedTurns, s.TTLSeconds = int(current), int(tokens), int(failed), int(ttl)
	if expiredAt.Valid {
		at := expiredAt.Time
		s.ExpiredAt = &at
	}
	for _, f := range []struct {
		name string
		raw  []byte
		into any
	}{
		{session.FieldFocus, focus, &s.Focus},
		{session.FieldPendingClarification, pending, &s.PendingClarification},
		{session.FieldRefCounters, refCounters, &s.RefCounters},
		{session.FieldGenCounters, genCounters, &s.GenCounters},
		{session.FieldMetadata, metadata, &s.Metadata},
	} {
		if len(f.raw) == 0 {
			continue
		}
		if err := json.Unmarshal(f.raw, f.into); err != nil {
			return nil, fmt.Errorf("unmarshal field %s: %w", f.name, err)
		}
	}
	return &s, nil
}
