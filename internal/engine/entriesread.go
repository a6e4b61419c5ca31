package engine

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"sessiongraph/internal/access"
	"sessiongraph/internal/registry"
)

// The refs a build reads are read by one statement of a fixed shape and
// scanned column by column into typed values: ent's generic scan (a
// scanner allocated per column per row, the driver's column types looked
// up for every statement, an artifact joined as JSON and decoded whole)
// was most of a first build's CPU.

// entriesColumns are the refs' columns a build reads, in toEntry's order.
const entriesColumns = `r.ref, r.entity_type, r.entity_id, r.label, r.action, r.detail_level, r.full_turn,
	r.turn_created, r.turn_last_referenced, r.source_step, r.turn_promoted, r.active_reason, r.enrich_table,
	r.enrich_name_column`

// entriesStatements are readEntries' statements, by whether they carry
// the artifacts' content (ACT and REPLY) and whether the caller is
// confined to a tenant: the refs in the window, retained, or generated and
// not saved (liveRefs), each with its artifact joined by its key (session
// and ref: on Citus a join of colocated shards), ordered by stable fields
// only (the ref by its bytes, as entryOrder does), at most maxContextRefs.
var entriesStatements = func() (out [2][2]string) {
	for full, artifact := range []string{`j.id IS NOT NULL, j.status`,
		`j.id IS NOT NULL, j.status, j.entity_type, j.label, j.content, j.revision, j.created_turn, j.promoted_turn, j.source_step`} {
		for confined, tenant := range []string{"", `
	AND r.session_id IN (SELECT sessions.id FROM sessions WHERE sessions.tenant = $3)`} {
			out[full][confined] = `SELECT ` + entriesColumns + `, ` + artifact + `
FROM refs AS r LEFT JOIN artifacts AS j ON r.session_id = j.session_id AND r.id = j.ref_id
WHERE r.session_id = $1 AND (r.turn_last_referenced >= $2 OR r.entity_id IS NULL OR r.active_reason IS NOT NULL)` + tenant + `
ORDER BY r.turn_last_referenced DESC, r.turn_created ASC, r.ref COLLATE "C" ASC
LIMIT ` + fmt.Sprint(maxContextRefs)
		}
	}
	return out
}()

// readEntries reads the refs of session id a build shows, from turn since
// on (or retained, or generated and not saved), with their artifacts'
// content when full (else their status alone), confined to the caller's
// tenant as ent's queries are (access.Confine).
func (bs *Builds) readEntries(ctx context.Context, id uuid.UUID, since int, full bool) ([]*registry.Entry, error) {
	tenant, err := access.TenantScope(ctx)
	if err != nil {
		return nil, err
	}
	args := []any{id, since}
	confined := 0
	if tenant != "" {
		args, confined = append(args, tenant), 1
	}
	rows, err := bs.client.QueryContext(ctx, entriesStatements[b2i(full)][confined], args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	entries := []*registry.Entry{}
	for rows.Next() {
		var (
			en                                              registry.Entry
			entityID                                        uuid.NullUUID
			detail, reason, enrichTable, enrichName, status sql.NullString
			fullTurn, sourceStep, promoted                  sql.NullInt64
			created, referenced                             int64
			hasArtifact                                     bool
			aType, aLabel                                   sql.NullString
			content                                         []byte
			revision, aCreated                              sql.NullInt64
			aPromoted, aSource                              sql.NullInt64
		)
		dest := []any{&en.Ref, &en.EntityType, &entityID, &en.Label, &en.Action, &detail, &fullTurn,
			&created, &referenced, &sourceStep, &promoted, &reason, &enrichTable, &enrichName, &hasArtifact, &status}
		if full {
			dest = append(dest, &aType, &aLabel, &content, &revision, &aCreated, &aPromoted, &aSource)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		if entityID.Valid {
			en.EntityID = &entityID.UUID
		}
		en.DetailLevel = detail.String
		en.FullTurn, en.SourceStep, en.TurnPromoted = intOf(fullTurn), intOf(sourceStep), intOf(promoted)
		en.TurnCreated, en.TurnLastReferenced = int(created), int(referenced)
		en.ActiveReason, en.EnrichTable, en.EnrichNameColumn = stringOf(reason), stringOf(enrichTable), stringOf(enrichName)
		if hasArtifact {
			en.Artifact = &registry.Artifact{Status: status.String}
			if full {
				a := en.Artifact
				a.EntityType, a.Label = aType.String, aLabel.String
				a.Revision, a.CreatedTurn = int(revision.Int64), int(aCreated.Int64)
				a.PromotedTurn, a.SourceStep = intOf(aPromoted), intOf(aSource)
				if err := json.Unmarshal(content, &a.Content); err != nil {
					return nil, fmt.Errorf("the artifact of %s: %w", en.Ref, err)
				}
			}
		}
		entries = append(entries, &en)
	}
	return entries, rows.Err()
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func intOf(v sql.NullInt64) *int {
	if !v.Valid {
		return nil
	}
	n := int(v.Int64)
	return &n
}

func stringOf(v sql.NullString) *string {
	if !v.Valid {
		return nil
	}
	return &v.String
}
