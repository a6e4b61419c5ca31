package engine

import (
	"context"
	"database/sql"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"

	"sessiongraph/ent"
	"sessiongraph/ent/ref"
	"sessiongraph/internal/access"
)

// The refs a registry write selects are read, on the write's transaction,
// by one statement of a fixed shape scanned into ent's Ref fields: ent's
// generic scan of them (a scanner per column per row, the driver's column
// types looked up per statement, every column matched by name) was most of
// the read's CPU. The rows equal ent's read of the same selection, field
// by field (TestSelectedRefsReadAsEnt). They carry no ent client: the
// registry reads their values, and persist their ids and artifacts'; no
// edge of theirs is queried.

// selectedColumns are the refs' columns in ent's order (ref.Columns),
// which selectedRow scans in turn.
const selectedColumns = `r.id, r.session_id, r.ref, r.entity_type, r.entity_id, r.label, r.action, r.detail_level,
	r.full_turn, r.turn_created, r.turn_last_referenced, r.source_step, r.turn_promoted, r.active_reason,
	r.enrich_table, r.enrich_name_column, r.created_at, r.updated_at`

// selectedStatements are the statements of selection.predicate, by whether
// the artifacts are joined (as withArtifact joins them) and whether the
// caller is confined to a tenant ($6, as access.Confine confines ent's
// queries): the refs of session $1 whose entity is one of $2, or whose
// name is one of $3, or of type $4 with label $5 (ignoring case and
// surrounding spaces) and a pending artifact, when both are given.
var selectedStatements = func() (out [2][2]string) {
	for joined, artifact := range [2][2]string{{"", ""}, {`, row_to_json(joined.*)`,
		` LEFT JOIN artifacts AS joined ON r.session_id = joined.session_id AND r.id = joined.ref_id`}} {
		for confined, tenant := range []string{"", `
	AND r.session_id IN (SELECT sessions.id FROM sessions WHERE sessions.tenant = $6)`} {
			out[joined][confined] = `SELECT ` + selectedColumns + artifact[0] + `
FROM refs AS r` + artifact[1] + `
WHERE r.session_id = $1 AND (r.entity_id = ANY($2::uuid[]) OR r.ref = ANY($3::text[])
	OR ($4 <> '' AND $5 <> '' AND r.entity_type = $4 AND lower(btrim(r.label)) = lower(btrim($5))
		AND EXISTS (SELECT 1 FROM artifacts AS a WHERE a.session_id = r.session_id AND a.ref_id = r.id AND a.status = 'PENDING')))` + tenant
		}
	}
	return out
}()

// readSelected reads the refs of session id that sel selects, with their
// artifacts when sel asks, on tx; sel selects something (see load).
func readSelected(ctx context.Context, tx *ent.Tx, id uuid.UUID, sel selection) ([]*ent.Ref, error) {
	tenant, err := access.TenantScope(ctx)
	if err != nil {
		return nil, err
	}
	entityIDs := make(pgtype.FlatArray[pgtype.UUID], len(sel.entityIDs))
	for i, e := range sel.entityIDs {
		entityIDs[i] = pgtype.UUID{Bytes: e, Valid: true}
	}
	refs := sel.refs
	if refs == nil {
		refs = []string{}
	}
	args := []any{id, entityIDs, refs, sel.pendingOf, sel.pendingLabel}
	confined := 0
	if tenant != "" {
		args, confined = append(args, tenant), 1
	}
	rows, err := tx.QueryContext(ctx, selectedStatements[b2i(sel.artifacts)][confined], args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []*ent.Ref{}
	for rows.Next() {
		row, err := selectedRow(rows, sel.artifacts)
		if err != nil {
			return nil, err
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// selectedRow scans a row of selectedColumns (and the joined artifact's
// JSON) as ent's assignValues does: a NULL column leaves its field nil.
func selectedRow(rows *sql.Rows, joined bool) (*ent.Ref, error) {
	var (
		r                                      ent.Ref
		entityID                               uuid.NullUUID
		detail, reason, enrichTable, enrichCol sql.NullString
		fullTurn, sourceStep, promoted         sql.NullInt64
		created, referenced                    int64
		artifact                               []byte
	)
	dest := []any{&r.ID, &r.SessionID, &r.Ref, &r.EntityType, &entityID, &r.Label, &r.Action, &detail, &fullTurn,
		&created, &referenced, &sourceStep, &promoted, &reason, &enrichTable, &enrichCol, &r.CreatedAt, &r.UpdatedAt}
	if joined {
		dest = append(dest, &artifact)
	}
	if err := rows.Scan(dest...); err != nil {
		return nil, err
	}
	if entityID.Valid {
		r.EntityID = &entityID.UUID
	}
	if detail.Valid {
		d := ref.DetailLevel(detail.String)
		r.DetailLevel = &d
	}
	r.FullTurn, r.SourceStep, r.TurnPromoted = intOf(fullTurn), intOf(sourceStep), intOf(promoted)
	r.TurnCreated, r.TurnLastReferenced = int(created), int(referenced)
	r.ActiveReason, r.EnrichTable, r.EnrichNameColumn = stringOf(reason), stringOf(enrichTable), stringOf(enrichCol)
	if joined && artifact != nil {
		a, err := decodeArtifact(r.Ref, artifact)
		if err != nil {
			return nil, err
		}
		r.Edges.Artifact = a
	}
	return &r, nil
}
