package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"
	"entgo.io/ent/dialect/sql/sqlgraph"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"sessiongraph/ent"
	"sessiongraph/ent/artifact"
	"sessiongraph/ent/predicate"
	"sessiongraph/ent/ref"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/registry"
	"sessiongraph/internal/store"
)

// Writes changes a session's registry: the records a runtime read, created,
// updated, deleted or generated, and the curation of its refs. Each
// operation begins a registry write, applies the registry's rules and
// commits what changed.
type Writes struct {
	client  *ent.Client
	store   *store.Store
	domains *Domains
	// builds learns what each committed write changed, so that the build
	// after it can be patched.
	builds *buildCache
}

// selection says which of a session's refs an operation needs; they are
// loaded in one statement.
type selection struct {
	entityIDs []uuid.UUID
	refs      []string
	// pendingOf and pendingLabel load the pending artifacts of a type whose
	// label matches (ignoring case and surrounding spaces), for promotion.
	pendingOf, pendingLabel string
	// artifacts loads each ref's artifact too.
	artifacts bool
}

func (s selection) predicate(sessionID uuid.UUID) predicate.Ref {
	var any []predicate.Ref
	if len(s.entityIDs) > 0 {
		any = append(any, ref.EntityIDIn(s.entityIDs...))
	}
	if len(s.refs) > 0 {
		any = append(any, ref.RefIn(s.refs...))
	}
	if s.pendingOf != "" && s.pendingLabel != "" {
		any = append(any, ref.And(
			ref.EntityType(s.pendingOf),
			sameLabel(s.pendingLabel),
			hasPendingArtifact(),
		))
	}
	return ref.And(ref.SessionID(sessionID), ref.Or(any...))
}

// hasPendingArtifact matches refs with a PENDING artifact. It names the
// session in the artifact's subquery as well as the ref (ent's
// HasArtifactWith joins by ref_id alone), so that Citus plans it on the
// session's shard: it refuses a subquery that is not joined on the
// distribution column.
func hasPendingArtifact() predicate.Ref {
	return predicate.Ref(func(s *sql.Selector) {
		t := sql.Table(artifact.Table)
		s.Where(sql.Exists(sql.Select(t.C(artifact.FieldRefID)).From(t).Where(sql.And(
			sql.ColumnsEQ(t.C(artifact.FieldSessionID), s.C(ref.FieldSessionID)),
			sql.ColumnsEQ(t.C(artifact.FieldRefID), s.C(ref.FieldID)),
			sql.EQ(t.C(artifact.FieldStatus), artifact.StatusPending),
		))))
	})
}

// sameLabel matches refs whose label equals label ignoring case and
// surrounding spaces, as registry promotion does.
func sameLabel(label string) predicate.Ref {
	return predicate.Ref(func(s *sql.Selector) {
		s.Where(sql.P(func(b *sql.Builder) {
			b.WriteString("lower(btrim(" + s.C(ref.FieldLabel) + ")) = lower(btrim(").Arg(label).WriteString("))")
		}))
	})
}

// loaded remembers the rows behind a registry, to persist only changes.
type loaded struct {
	rows map[string]*ent.Ref
}

// load reads the selected refs into a registry at the session's turn, by
// ent's query.
func load(ctx context.Context, refs *ent.RefClient, s *ent.Session, sel selection) (*registry.Registry, loaded, error) {
	rows, err := queryRefs(ctx, refs, s.ID, sel)
	if err != nil {
		return nil, loaded{}, err
	}
	r, l := loadRows(ctx, s, rows)
	return r, l, nil
}

// queryRefs reads the refs sel selects in session id by ent's query, with
// their artifacts when sel asks; none when sel selects none.
func queryRefs(ctx context.Context, refs *ent.RefClient, id uuid.UUID, sel selection) ([]*ent.Ref, error) {
	if !sel.selects() {
		return nil, nil
	}
	q := refs.Query().Where(sel.predicate(id))
	if !sel.artifacts {
		return q.All(ctx)
	}
	withArtifact(q)
	rows, err := q.All(ctx)
	if err != nil {
		return nil, err
	}
	for _, row := range rows {
		if row.Edges.Artifact, err = joinedArtifact(row); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// selectRefs reads the refs sel selects in session id on a write's
// transaction: by readSelected's statement when the selection has one (a
// pending label with its type), else by ent's query.
func selectRefs(ctx context.Context, tx *ent.Tx, id uuid.UUID, sel selection) ([]*ent.Ref, error) {
	if sel.readsSelected() {
		return readSelected(ctx, tx, id, sel)
	}
	return queryRefs(ctx, tx.Ref, id, sel)
}

// readAhead is the read of the refs sel selects in session id, for Begin
// to send with the session's lock (store.Read), and where its rows are
// once Begin has returned; none when the selection has no statement of
// readSelected's, or reads nothing (selectRefs reads it then).
func readAhead(ctx context.Context, id uuid.UUID, sel selection) ([]store.Read, *[]*ent.Ref) {
	if !sel.readsSelected() {
		return nil, nil
	}
	query, args, err := selectedQuery(ctx, id, sel)
	if err != nil {
		return nil, nil // selectRefs meets the error
	}
	rows := new([]*ent.Ref)
	read := store.Read{SQL: query, Args: args, Rows: func(r pgx.Rows) (err error) {
		*rows, err = scanSelected(r, sel.artifacts)
		return err
	}}
	return []store.Read{read}, rows
}

// selects reports whether s selects any ref: queryRefs reads none when not.
func (s selection) selects() bool {
	return len(s.entityIDs) > 0 || len(s.refs) > 0 || s.pendingLabel != ""
}

// readsSelected reports whether selectRefs reads sel by readSelected.
func (s selection) readsSelected() bool {
	return s.selects() && (s.pendingLabel == "" || s.pendingOf != "")
}

// loadRows loads rows, the refs an operation selected, into a registry at
// the session's turn.
func loadRows(ctx context.Context, s *ent.Session, rows []*ent.Ref) (*registry.Registry, loaded) {
	l := loaded{rows: make(map[string]*ent.Ref, len(rows))}
	entries := make([]*registry.Entry, len(rows))
	for i, row := range rows {
		l.rows[row.Ref] = row
		entries[i] = toEntry(row)
	}
	r := registry.New(s.CurrentTurn, s.RefCounters, s.GenCounters, entries...)
	r.StopWhen(ctx)
	return r, l
}

// inSession keeps an eager load of refs' artifacts to their session, so
// that it reads the artifacts by their key (session_id, ref_id) and, on
// Citus, one shard.
func inSession(id uuid.UUID) func(*ent.ArtifactQuery) {
	return func(q *ent.ArtifactQuery) { q.Where(artifact.SessionID(id)) }
}

// artifactColumn is the column that carries a ref's artifact in the ref's
// own row, as JSON.
const artifactColumn = "joined_artifact"

// withArtifact joins each ref's artifact into its row: the same rows as
// ent's WithArtifact in one statement, where eager loading takes a second.
func withArtifact(q *ent.RefQuery) {
	joinArtifact(q, func(t *sql.SelectTable) string { return "row_to_json(" + t.C("*") + ")" })
}

// withArtifactStatus joins only each artifact's id and status: enough to
// tell a pending artifact from a cleared or saved one, for the builds that
// place refs in tiers but never show content.
func withArtifactStatus(q *ent.RefQuery) {
	joinArtifact(q, func(t *sql.SelectTable) string {
		id := t.C(artifact.FieldID)
		return "CASE WHEN " + id + " IS NULL THEN NULL ELSE json_build_object('id', " + id + ", 'status', " + t.C(artifact.FieldStatus) + ") END"
	})
}

// joinArtifact left-joins each ref's artifact and selects, as
// artifactColumn, the JSON that object makes of it.
func joinArtifact(q *ent.RefQuery, object func(*sql.SelectTable) string) {
	q.Modify(func(s *sql.Selector) {
		t := sql.Table(artifact.Table).As("joined")
		// By session and ref: the artifact's key, and on Citus a join of
		// colocated shards (docs/scale-out.md).
		s.LeftJoin(t).OnP(sql.And(
			sql.ColumnsEQ(s.C(ref.FieldSessionID), t.C(artifact.FieldSessionID)),
			sql.ColumnsEQ(s.C(ref.FieldID), t.C(artifact.FieldRefID))))
		s.AppendSelectExprAs(sql.Expr(object(t)), artifactColumn)
	})
}

// joinedArtifact decodes the artifact withArtifact joined into a ref's row;
// nil when the ref has none. JSON names are the columns' (ent's tags).
func joinedArtifact(row *ent.Ref) (*ent.Artifact, error) {
	v, err := row.Value(artifactColumn)
	if err != nil {
		return nil, err
	}
	var raw []byte
	switch v := v.(type) {
	case nil:
		return nil, nil
	case []byte:
		raw = v
	case string:
		raw = []byte(v)
	default:
		return nil, fmt.Errorf("the joined artifact of %s is a %T", row.Ref, v)
	}
	return decodeArtifact(row.Ref, raw)
}

// decodeArtifact decodes the JSON of ref's joined artifact; nil when the
// ref has none.
func decodeArtifact(ref string, raw []byte) (*ent.Artifact, error) {
	var a *ent.Artifact
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("the joined artifact of %s: %w", ref, err)
	}
	if a == nil || a.ID == uuid.Nil {
		return nil, nil
	}
	return a, nil
}

// Stored holds the refs a registry write stored, by name, as their rows now
// read, so that the write's payload needs no read-back.
type Stored map[string]*ent.Ref

// registryWrite is a registry operation in progress: the session's write,
// its domain, and the registry loaded with the refs the operation
// selected. The operation applies the registry's rules to reg (plain code
// over values), then commitRegistry stores what changed.
type registryWrite struct {
	*store.Tx
	reg    *registry.Registry
	domain *registry.Domain
	loaded loaded
	// within is the larger write the operation is part of (a turn's
	// closing writes), or nil when the operation is a write of its own.
	within *sharedWrite
	// after is the session as the committed write left it, set by
	// commitRegistry on a write of its own.
	after *ent.Session
}

// sharedWrite is one write that carries several operations, each by the
// rules of the call that does it alone: they run in order on its Tx, each
// seeing what the ones before it wrote, and their events are kept, in
// order, for the one Commit its owner makes.
type sharedWrite struct {
	*store.Tx
	Events []store.Event
}

// beginRegistry begins a registry operation: it locks the session (or,
// within a shared write, goes on in its transaction), reads its domain and
// loads the selected refs at the session's turn. The caller ends it with
// commitRegistry, or Rollback.
func (wr *Writes) beginRegistry(ctx context.Context, within *sharedWrite, sessionID uuid.UUID, sel selection) (*registryWrite, error) {
	rw := &registryWrite{within: within}
	reads, ahead := readAhead(ctx, sessionID, sel)
	if within != nil {
		// What the operations before wrote, then this one's reads.
		rw.Tx = within.Tx
		if err := within.Flush(ctx, reads...); err != nil {
			return nil, conflictError(err)
		}
	} else {
		w, err := wr.store.Begin(ctx, sessionID, reads...)
		if err != nil {
			return nil, err
		}
		rw.Tx = w
	}
	var rows []*ent.Ref
	d, err := wr.domains.domain(ctx, rw.Tx.Tx.EntityType, rw.Session.Domain)
	switch {
	case err != nil:
	case ahead != nil:
		rows = *ahead
	default:
		rows, err = selectRefs(ctx, rw.Tx.Tx, rw.Session.ID, sel)
	}
	if err != nil {
		rw.Rollback()
		return nil, err
	}
	rw.domain = d
	rw.reg, rw.loaded = loadRows(ctx, rw.Session, rows)
	return rw, nil
}

// Rollback ends an operation that did not commit; within a shared write
// it leaves the transaction to the write's owner, which rolls it all back
// on the operation's error.
func (rw *registryWrite) Rollback() {
	if rw.within == nil {
		rw.Tx.Rollback()
	}
}

// commitRegistry stores what a registry operation changed and commits it
// with ev: the changed refs and artifacts in one statement each, the
// step's items (when items is not nil; the event then names the step),
// and the counters with the session's activity stamp. It returns the refs
// it stored. Within a shared write it stores the same, keeps ev for the
// owner's commit, and leaves the new counters on the session for the
// next operation to number from.
func (wr *Writes) commitRegistry(ctx context.Context, rw *registryWrite, ev store.Event, items *stepItems) (Stored, error) {
	// The writes go with the commit (within a shared write, with the next
	// operation's reads: Flush).
	stored, err := persist(rw.Tx, rw.reg.Changed(), rw.loaded)
	if err != nil {
		return nil, err
	}
	added, err := addToStep(rw.Tx, items)
	if err != nil {
		return nil, err
	}
	if added {
		ev.Payload["step"] = items.Step
	}
	rw.Update().SetRefCounters(rw.reg.Counters).SetGenCounters(rw.reg.GenCounters)
	if rw.within != nil {
		rw.Session.RefCounters, rw.Session.GenCounters = rw.reg.Counters, rw.reg.GenCounters
		rw.within.Events = append(rw.within.Events, ev)
		return stored, nil
	}
	// What the write changed, taken before the commit: a build after it is
	// patched only from a write known to have changed these refs alone.
	w := refsWriteOf(rw.reg.Changed(), stored, rw.loaded, added)
	if _, err := rw.Commit(ctx, store.Record(ev)); err != nil {
		return nil, conflictError(err) // the refs' upsert goes with the commit
	}
	rw.after = sessionAfter(rw.Tx, 1)
	if w != nil {
		wr.builds.wrote(rw.Session.ID, rw.Session.EventSequence, w)
	}
	for _, row := range stored {
		wr.client.Ref.Adopt(row) // committed: later edge reads go through the client
	}
	return stored, nil
}

// sessionAfter is the session row w locked as its commit of events events
// left it: a registry write changes the row's counters, its activity stamp
// and its event sequence, and nothing a context build reads besides the
// sequence, which names the state the build is of.
func sessionAfter(w *store.Tx, events int) *ent.Session {
	after := *w.Session
	after.EventSequence += int64(events)
	if v, ok := w.Update().Mutation().RefCounters(); ok {
		after.RefCounters = v
	}
	if v, ok := w.Update().Mutation().GenCounters(); ok {
		after.GenCounters = v
	}
	if v, ok := w.Update().Mutation().LastActiveAt(); ok {
		after.LastActiveAt = v
	}
	if v, ok := w.Update().Mutation().ExpiresAt(); ok {
		after.ExpiresAt = v
	}
	return &after
}

// persist queues the upserts of the changed refs, then of their changed
// artifacts, for the write's commit, and returns the refs as stored. New rows carry the commit's single
// timestamp.
func persist(w *store.Tx, changed []*registry.Entry, l loaded) (Stored, error) {
	if len(changed) == 0 {
		return nil, nil
	}
	// PostgreSQL keeps microseconds (and pgx truncates to them), so the
	// rows returned hold what a read would; in its location too (pgx reads
	// a timestamptz as local time).
	tx, sessionID, now := w.Tx, w.Session.ID, w.Now.Truncate(time.Microsecond)
	// Each changed ref's stored row (nil for a new ref) and its id.
	rows, ids := make([]*ent.Ref, len(changed)), make([]uuid.UUID, len(changed))
	for i, en := range changed {
		ids[i] = uuid.Must(uuid.NewV7())
		if rows[i] = l.rows[en.Ref]; rows[i] != nil {
			ids[i] = rows[i].ID
		}
	}
	// One statement of a fixed shape upserts them all. Nothing is read
	// back: the session is locked, so each ref is stored exactly as sent,
	// keeping of a stored row what the upsert keeps (see upsertRefs).
	args, updated := upsertArgs(changed, ids, sessionID, now)
	w.ExecWithCommit(upsertRefs, args...)
	stored := make(Stored, len(changed))
	for i, en := range changed {
		r := &ent.Ref{ID: ids[i], SessionID: sessionID, Ref: en.Ref, EntityType: en.EntityType, EntityID: en.EntityID,
			Label: en.Label, Action: en.Action, FullTurn: en.FullTurn, TurnCreated: en.TurnCreated,
			TurnLastReferenced: en.TurnLastReferenced, SourceStep: en.SourceStep, TurnPromoted: en.TurnPromoted,
			ActiveReason: en.ActiveReason, EnrichTable: en.EnrichTable, EnrichNameColumn: en.EnrichNameColumn,
			CreatedAt: now.Local(), UpdatedAt: updated[i].Local()}
		if en.DetailLevel != "" {
			d := ref.DetailLevel(en.DetailLevel)
			r.DetailLevel = &d
		}
		if row := rows[i]; row != nil {
			r.EntityType, r.TurnCreated, r.CreatedAt = row.EntityType, row.TurnCreated, row.CreatedAt
		}
		stored[en.Ref] = tx.Ref.Adopt(r)
	}
	// The artifacts, by their key (session and ref): a stored one keeps its
	// id, session, ref, type, turn created and created_at.
	ins := sql.Dialect(dialect.Postgres).Insert(artifact.Table).Columns(artifact.FieldID, artifact.FieldSessionID,
		artifact.FieldRefID, artifact.FieldEntityType, artifact.FieldLabel, artifact.FieldContent, artifact.FieldStatus,
		artifact.FieldRevision, artifact.FieldCreatedTurn, artifact.FieldPromotedTurn, artifact.FieldSourceStep,
		artifact.FieldCreatedAt, artifact.FieldUpdatedAt)
	arts := 0
	for i, en := range changed {
		a := en.Artifact
		if a == nil {
			continue
		}
		content, err := json.Marshal(a.Content)
		if err != nil {
			return nil, err
		}
		id, created := uuid.Must(uuid.NewV7()), now
		if row := rows[i]; row != nil && row.Edges.Artifact != nil {
			id, created = row.Edges.Artifact.ID, row.Edges.Artifact.CreatedAt
		}
		ins.Values(id, sessionID, ids[i], a.EntityType, a.Label, content, a.Status, a.Revision, a.CreatedTurn,
			a.PromotedTurn, a.SourceStep, created, now)
		arts++
	}
	if arts > 0 {
		query, args := ins.OnConflict(sql.ConflictColumns(artifact.FieldSessionID, artifact.FieldRefID),
			sql.ResolveWith(func(u *sql.UpdateSet) {
				for _, c := range []string{artifact.FieldLabel, artifact.FieldContent, artifact.FieldStatus, artifact.FieldRevision,
					artifact.FieldPromotedTurn, artifact.FieldSourceStep, artifact.FieldUpdatedAt} {
					u.SetExcluded(c)
				}
			})).Query()
		w.ExecWithCommit(query, args...)
	}
	return stored, nil
}

// upsertRefs upserts a write's changed refs from one array per column.
// ent's bulk builder wrote a VALUES row of 18 arguments per ref: pgx
// planned and encoded each one, and each count of refs was a new statement
// for PostgreSQL to plan. This one has 18 arguments whatever the count, and
// is prepared once.
//
// Every mutable column is written, so that clearing a value (a released
// reason, a dequeued enrichment) reaches the row; a ref already stored
// keeps its id, session, name, type, turn created and created_at.
//
// The rows come from the arrays joined to the session's row, by its id:
// on Citus an INSERT … SELECT whose SELECT reads the target's colocated
// table by its distribution column runs on that one shard, where a SELECT
// of the arrays alone is evaluated on the coordinator and its rows sent on.
const upsertRefs = `INSERT INTO refs (id, session_id, ref, entity_type, entity_id, label, action, detail_level, full_turn,
	turn_created, turn_last_referenced, source_step, turn_promoted, active_reason, enrich_table,
	enrich_name_column, created_at, updated_at)
SELECT r.id, s.id, r.ref, r.entity_type, r.entity_id, r.label, r.action, r.detail_level, r.full_turn,
	r.turn_created, r.turn_last_referenced, r.source_step, r.turn_promoted, r.active_reason, r.enrich_table,
	r.enrich_name_column, $17, r.updated_at
FROM sessions AS s, unnest($1::uuid[], $2::text[], $3::text[], $4::uuid[], $5::text[], $6::text[], $7::text[],
	$8::bigint[], $9::bigint[], $10::bigint[], $11::bigint[], $12::bigint[], $13::text[], $14::text[], $15::text[],
	$18::timestamptz[]) AS r(id, ref, entity_type, entity_id, label, action, detail_level, full_turn, turn_created,
	turn_last_referenced, source_step, turn_promoted, active_reason, enrich_table, enrich_name_column, updated_at)
WHERE s.id = $16
ON CONFLICT (session_id, ref) DO UPDATE SET entity_id = EXCLUDED.entity_id, label = EXCLUDED.label,
	action = EXCLUDED.action, detail_level = EXCLUDED.detail_level, full_turn = EXCLUDED.full_turn,
	turn_last_referenced = EXCLUDED.turn_last_referenced, source_step = EXCLUDED.source_step,
	turn_promoted = EXCLUDED.turn_promoted, active_reason = EXCLUDED.active_reason,
	enrich_table = EXCLUDED.enrich_table, enrich_name_column = EXCLUDED.enrich_name_column,
	updated_at = EXCLUDED.updated_at`

// upsertArgs are upsertRefs' arguments: an array per column, which pgx
// sends as a binary array (invalid elements as NULL), then the session, the
// commit's timestamp (created_at of new refs) and each ref's updated_at,
// which it returns too.
// The arrays hold pointers to pgtype's values (pointersTo), or int64s: pgx
// encodes a *pgtype.Text, UUID, Int8 or Timestamptz by its valuer, without
// boxing the element. A *string or a uuid.UUID made pgx encode each element
// by reflection, and each uuid through its text (driver.Valuer).
//
// updated_at orders refs referenced in the same turn, newest first (working
// memory's "last 20"), so within one write it follows the order the write
// touched them: the last gets the commit's timestamp, each one before it a
// microsecond less. A write touches far fewer refs than the microseconds it
// takes, so this never reaches back past an earlier write.
func upsertArgs(changed []*registry.Entry, ids []uuid.UUID, sessionID uuid.UUID, now time.Time) ([]any, []time.Time) {
	n := len(changed)
	var (
		refs, types, labels, actions                = make([]pgtype.Text, n), make([]pgtype.Text, n), make([]pgtype.Text, n), make([]pgtype.Text, n)
		rowIDs, entityIDs                           = make([]pgtype.UUID, n), make([]pgtype.UUID, n)
		details, reasons, enrichTables, enrichNames = make([]pgtype.Text, n), make([]pgtype.Text, n), make([]pgtype.Text, n), make([]pgtype.Text, n)
		fullTurns, sourceSteps, promoted            = make([]pgtype.Int8, n), make([]pgtype.Int8, n), make([]pgtype.Int8, n)
		created, lastReferenced                     = make([]int64, n), make([]int64, n)
		updated                                     = make([]time.Time, n)
		updatedAts                                  = make([]pgtype.Timestamptz, n)
	)
	for i, en := range changed {
		rowIDs[i] = pgtype.UUID{Bytes: ids[i], Valid: true}
		refs[i], types[i], labels[i], actions[i] = textOf(&en.Ref), textOf(&en.EntityType), textOf(&en.Label), textOf(&en.Action)
		if en.EntityID != nil {
			entityIDs[i] = pgtype.UUID{Bytes: *en.EntityID, Valid: true}
		}
		if en.DetailLevel != "" {
			details[i] = pgtype.Text{String: en.DetailLevel, Valid: true}
		}
		fullTurns[i], sourceSteps[i], promoted[i] = int8Of(en.FullTurn), int8Of(en.SourceStep), int8Of(en.TurnPromoted)
		created[i], lastReferenced[i] = int64(en.TurnCreated), int64(en.TurnLastReferenced)
		reasons[i], enrichTables[i], enrichNames[i] = textOf(en.ActiveReason), textOf(en.EnrichTable), textOf(en.EnrichNameColumn)
		updated[i] = now.Add(-time.Duration(n-1-i) * time.Microsecond)
		updatedAts[i] = pgtype.Timestamptz{Time: updated[i], Valid: true}
	}
	return []any{pointersTo(rowIDs), pointersTo(refs), pointersTo(types), pointersTo(entityIDs), pointersTo(labels),
		pointersTo(actions), pointersTo(details), pointersTo(fullTurns), created, lastReferenced, pointersTo(sourceSteps),
		pointersTo(promoted), pointersTo(reasons), pointersTo(enrichTables), pointersTo(enrichNames), sessionID, now,
		pointersTo(updatedAts)}, updated
}

// pointersTo is an array of pointers to s's elements, for pgx to send.
// pgx takes each element of an array as an any (FlatArray.Index): a value
// of pgtype's (Text, UUID, Int8, Timestamptz) is boxed, an allocation per
// element, where a pointer to it is not, and pgx encodes the pointer by the
// type's own valuer (TextValuer and the like) all the same.
func pointersTo[T any](s []T) pgtype.FlatArray[*T] {
	p := make(pgtype.FlatArray[*T], len(s))
	for i := range s {
		p[i] = &s[i]
	}
	return p
}

func int8Of(v *int) pgtype.Int8 {
	if v == nil {
		return pgtype.Int8{}
	}
	return pgtype.Int8{Int64: int64(*v), Valid: true}
}

func textOf(v *string) pgtype.Text {
	if v == nil {
		return pgtype.Text{}
	}
	return pgtype.Text{String: *v, Valid: true}
}

func toEntry(row *ent.Ref) *registry.Entry {
	en := &registry.Entry{
		Ref: row.Ref, EntityType: row.EntityType, EntityID: row.EntityID, Label: row.Label,
		Action: row.Action, FullTurn: row.FullTurn, TurnCreated: row.TurnCreated,
		TurnLastReferenced: row.TurnLastReferenced, SourceStep: row.SourceStep,
		TurnPromoted: row.TurnPromoted, ActiveReason: row.ActiveReason,
		EnrichTable: row.EnrichTable, EnrichNameColumn: row.EnrichNameColumn,
	}
	if row.DetailLevel != nil {
		en.DetailLevel = row.DetailLevel.String()
	}
	if a := row.Edges.Artifact; a != nil {
		en.Artifact = &registry.Artifact{
			EntityType: a.EntityType, Label: a.Label, Content: a.Content, Status: a.Status.String(),
			Revision: a.Revision, CreatedTurn: a.CreatedTurn, PromotedTurn: a.PromotedTurn, SourceStep: a.SourceStep,
		}
	}
	return en
}

// conflictError reports a unique violation on (session, entity id), which
// only a concurrent change to the same entity can cause.
func conflictError(err error) error {
	if ent.IsConstraintError(err) || sqlgraph.IsUniqueConstraintError(err) {
		return apperr.New(apperr.Conflict, "the registry changed while this request ran; retry it")
	}
	return err
}
