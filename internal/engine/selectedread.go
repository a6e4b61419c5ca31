package engine

import (
	"context"
	"fmt"
	"strings"

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
// which selectedScan.dest lists in turn.
const selectedColumns = `r.id, r.session_id, r.ref, r.entity_type, r.entity_id, r.label, r.action, r.detail_level,
	r.full_turn, r.turn_created, r.turn_last_referenced, r.source_step, r.turn_promoted, r.active_reason,
	r.enrich_table, r.enrich_name_column, r.created_at, r.updated_at`

// selectedStatement is the statement of selection.predicate for the
// disjuncts a selection has, with the artifacts joined (as withArtifact
// joins them) when it asks, confined to a tenant (as access.Confine
// confines ent's queries) when confined: the refs of session $1 whose
// entity is one of an array, or whose name is one of an array, or of a
// type with a label (ignoring case and surrounding spaces) and a pending
// artifact. Its arguments follow $1 in that order, the tenant last, each
// only when its part is there: a disjunct the selection lacks is left out
// rather than matched against an empty argument, so that PostgreSQL's
// generic plan of each shape reads its indexes. There are 32 shapes, each
// prepared once per connection it runs on.
func selectedStatement(byEntity, byName, pending, artifacts, confined bool) string {
	n := 1
	next := func() string { n++; return fmt.Sprintf("$%d", n) }
	var or []string
	if byEntity {
		or = append(or, `r.entity_id = ANY(`+next()+`::uuid[])`)
	}
	if byName {
		or = append(or, `r.ref = ANY(`+next()+`::text[])`)
	}
	if pending {
		or = append(or, `(r.entity_type = `+next()+` AND lower(btrim(r.label)) = lower(btrim(`+next()+`))
		AND EXISTS (SELECT 1 FROM artifacts AS a WHERE a.session_id = r.session_id AND a.ref_id = r.id AND a.status = 'PENDING'))`)
	}
	q := `SELECT ` + selectedColumns
	if artifacts {
		q += `, row_to_json(joined.*)
FROM refs AS r LEFT JOIN artifacts AS joined ON r.session_id = joined.session_id AND r.id = joined.ref_id`
	} else {
		q += `
FROM refs AS r`
	}
	q += `
WHERE r.session_id = $1 AND (` + strings.Join(or, " OR ") + `)`
	if confined {
		q += `
	AND r.session_id IN (SELECT sessions.id FROM sessions WHERE sessions.tenant = ` + next() + `)`
	}
	return q
}

// selectedStatements are selectedStatement's shapes, by the bits
// readSelected sets: 1 by entity, 2 by name, 4 pending, 8 artifacts, 16
// confined.
var selectedStatements = func() (out [32]string) {
	for i := range out {
		out[i] = selectedStatement(i&1 != 0, i&2 != 0, i&4 != 0, i&8 != 0, i&16 != 0)
	}
	return out
}()

// readSelected reads the refs of session id that sel selects, with their
// artifacts when sel asks, on tx; sel selects something (see load).
func readSelected(ctx context.Context, tx *ent.Tx, id uuid.UUID, sel selection) ([]*ent.Ref, error) {
	query, args, err := selectedQuery(ctx, id, sel)
	if err != nil {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scanSelected(rows, sel.artifacts)
}

// scanSelected scans rows of selectedColumns (pgx's or database/sql's),
// with the joined artifact's JSON when joined.
func scanSelected(rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}, joined bool) ([]*ent.Ref, error) {
	out := []*ent.Ref{}
	var sc selectedScan // one set of scan targets for all the rows
	dest := sc.dest(joined)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		row, err := sc.ref(joined)
		if err != nil {
			return nil, err
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// selectedQuery is readSelected's statement and arguments, the same for
// the same selection by the same caller (see readAhead).
func selectedQuery(ctx context.Context, id uuid.UUID, sel selection) (string, []any, error) {
	tenant, err := access.TenantScope(ctx)
	if err != nil {
		return "", nil, err
	}
	args, shape := []any{id}, 0
	if len(sel.entityIDs) > 0 {
		entityIDs := make(pgtype.FlatArray[pgtype.UUID], len(sel.entityIDs))
		for i, e := range sel.entityIDs {
			entityIDs[i] = pgtype.UUID{Bytes: e, Valid: true}
		}
		args, shape = append(args, entityIDs), shape|1
	}
	if len(sel.refs) > 0 {
		args, shape = append(args, sel.refs), shape|2
	}
	if sel.pendingOf != "" && sel.pendingLabel != "" {
		args, shape = append(args, sel.pendingOf, sel.pendingLabel), shape|4
	}
	if sel.artifacts {
		shape |= 8
	}
	if tenant != "" {
		args, shape = append(args, tenant), shape|16
	}
	return selectedStatements[shape], args, nil
}

// selectedScan holds the scan targets of a row of selectedColumns (and
// the joined artifact's JSON): scanned into again for each row, they cost
// their allocations once per read instead of once per row. Its ids and
// nullable columns are pgx's own types, which pgx fills in place: through
// uuid.UUID's or sql.Null*'s Scan it writes each value as text or boxes it
// first (two allocations per id).
type selectedScan struct {
	r                                      ent.Ref
	id, sessionID, entityID                pgtype.UUID
	detail, reason, enrichTable, enrichCol pgtype.Text
	fullTurn, sourceStep, promoted         pgtype.Int8
	created, referenced                    int64
	artifact                               []byte
}

func (sc *selectedScan) dest(joined bool) []any {
	r := &sc.r
	dest := []any{&sc.id, &sc.sessionID, &r.Ref, &r.EntityType, &sc.entityID, &r.Label, &r.Action, &sc.detail, &sc.fullTurn,
		&sc.created, &sc.referenced, &sc.sourceStep, &sc.promoted, &sc.reason, &sc.enrichTable, &sc.enrichCol, &r.CreatedAt, &r.UpdatedAt}
	if joined {
		dest = append(dest, &sc.artifact)
	}
	return dest
}

// ref is the row last scanned as ent's assignValues reads it: a NULL column
// leaves its field nil.
func (sc *selectedScan) ref(joined bool) (*ent.Ref, error) {
	r := sc.r
	r.ID, r.SessionID = sc.id.Bytes, sc.sessionID.Bytes
	if sc.entityID.Valid {
		id := uuid.UUID(sc.entityID.Bytes)
		r.EntityID = &id
	}
	if sc.detail.Valid {
		d := ref.DetailLevel(sc.detail.String)
		r.DetailLevel = &d
	}
	r.FullTurn, r.SourceStep, r.TurnPromoted = optionalInt(sc.fullTurn), optionalInt(sc.sourceStep), optionalInt(sc.promoted)
	r.TurnCreated, r.TurnLastReferenced = int(sc.created), int(sc.referenced)
	r.ActiveReason, r.EnrichTable, r.EnrichNameColumn = optionalText(sc.reason), optionalText(sc.enrichTable), optionalText(sc.enrichCol)
	if joined && sc.artifact != nil {
		a, err := decodeArtifact(r.Ref, sc.artifact)
		if err != nil {
			return nil, err
		}
		r.Edges.Artifact = a
	}
	return &r, nil
}

func optionalInt(v pgtype.Int8) *int {
	if !v.Valid {
		return nil
	}
	n := int(v.Int64)
	return &n
}

func optionalText(v pgtype.Text) *string {
	if !v.Valid {
		return nil
	}
	return &v.String
}
