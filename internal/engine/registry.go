package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/ent/artifact"
	"sessiongraph/ent/predicate"
	"sessiongraph/ent/ref"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/registry"
	"sessiongraph/internal/store"
)

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
			ref.HasArtifactWith(artifact.StatusEQ(artifact.StatusPending)),
		))
	}
	return ref.And(ref.SessionID(sessionID), ref.Or(any...))
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

// load reads the selected refs into a registry at the session's turn.
func load(ctx context.Context, refs *ent.RefClient, s *ent.Session, sel selection) (*registry.Registry, loaded, error) {
	l := loaded{rows: map[string]*ent.Ref{}}
	var entries []*registry.Entry
	if len(sel.entityIDs) > 0 || len(sel.refs) > 0 || sel.pendingLabel != "" {
		q := refs.Query().Where(sel.predicate(s.ID))
		if sel.artifacts {
			withArtifact(q)
		}
		rows, err := q.All(ctx)
		if err != nil {
			return nil, l, err
		}
		for _, row := range rows {
			if sel.artifacts {
				if row.Edges.Artifact, err = joinedArtifact(row); err != nil {
					return nil, l, err
				}
			}
			l.rows[row.Ref] = row
			entries = append(entries, toEntry(row))
		}
	}
	r := registry.New(s.CurrentTurn, s.RefCounters, s.GenCounters, entries...)
	r.StopWhen(ctx)
	return r, l, nil
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
	q.Modify(func(s *sql.Selector) {
		t := sql.Table(artifact.Table).As("joined")
		// By session and ref: the artifact's key, and on Citus a join of
		// colocated shards (docs/scale-out.md).
		s.LeftJoin(t).OnP(sql.And(
			sql.ColumnsEQ(s.C(ref.FieldSessionID), t.C(artifact.FieldSessionID)),
			sql.ColumnsEQ(s.C(ref.FieldID), t.C(artifact.FieldRefID))))
		s.AppendSelectExprAs(sql.Expr("row_to_json("+t.C("*")+")"), artifactColumn)
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
	var a *ent.Artifact
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("the joined artifact of %s: %w", row.Ref, err)
	}
	if a == nil || a.ID == uuid.Nil {
		return nil, nil
	}
	return a, nil
}

// registryChange is an operation on the loaded registry; it returns the
// event to record.
type registryChange func(r *registry.Registry, d *registry.Domain) (store.Event, error)

// stepChange is a registryChange that also returns what the call adds to
// its step's result: nil when it carries no step.
type stepChange func(r *registry.Registry, d *registry.Domain) (store.Event, *stepItems, error)

// Stored holds the refs a registry write stored, by name, as their rows now
// read, so that the write's payload needs no read-back.
type Stored map[string]*ent.Ref

// writeRegistry runs one registry operation as a store write: load the
// selected refs under the session lock, apply the rules, then persist the
// changed refs and artifacts in one statement each and the counters with the
// session's activity stamp. It returns the refs it stored.
func (e *Engine) writeRegistry(ctx context.Context, sessionID uuid.UUID, sel selection, change registryChange) (Stored, error) {
	return e.writeRegistryStep(ctx, sessionID, sel, func(r *registry.Registry, d *registry.Domain) (store.Event, *stepItems, error) {
		ev, err := change(r, d)
		return ev, nil, err
	})
}

// writeRegistryStep is writeRegistry for a record call that may carry a
// step: what it returns for the step is added to the step's result in the
// same commit, and the event names the step.
func (e *Engine) writeRegistryStep(ctx context.Context, sessionID uuid.UUID, sel selection, change stepChange) (Stored, error) {
	var stored Stored
	err := e.store.Write(ctx, sessionID, func(ctx context.Context, w *store.Work) (store.Event, error) {
		d, err := e.domain(ctx, w.Tx.EntityType, w.Session.Domain)
		if err != nil {
			return store.Event{}, err
		}
		r, l, err := load(ctx, w.Tx.Ref, w.Session, sel)
		if err != nil {
			return store.Event{}, err
		}
		ev, items, err := change(r, d)
		if err != nil {
			return store.Event{}, err
		}
		if stored, err = persist(ctx, w, r.Changed(), l); err != nil {
			return store.Event{}, err
		}
		added, err := addToStep(ctx, w, items)
		if err != nil {
			return store.Event{}, err
		}
		if added {
			ev.Payload["step"] = items.Step
		}
		w.Update().SetRefCounters(r.Counters).SetGenCounters(r.GenCounters)
		return ev, nil
	})
	if err != nil {
		return nil, err
	}
	for _, row := range stored {
		row.Unwrap() // committed: later edge reads go through the client
	}
	return stored, nil
}

// persist upserts the changed refs, then their changed artifacts, and
// returns the refs as stored. New rows carry the commit's single timestamp.
func persist(ctx context.Context, w *store.Work, changed []*registry.Entry, l loaded) (Stored, error) {
	if len(changed) == 0 {
		return nil, nil
	}
	// PostgreSQL keeps microseconds (and pgx truncates to them), so the
	// returned rows hold what a read would.
	tx, sessionID, now := w.Tx, w.Session.ID, w.Now.Truncate(time.Microsecond)
	bulk := make([]*ent.RefCreate, len(changed))
	ids := make([]uuid.UUID, len(changed))
	for i, en := range changed {
		ids[i] = uuid.Must(uuid.NewV7())
		c := tx.Ref.Create().SetID(ids[i]).SetSessionID(sessionID).SetCreatedAt(now).SetUpdatedAt(now).SetRef(en.Ref).SetEntityType(en.EntityType).
			SetNillableEntityID(en.EntityID).SetLabel(en.Label).SetAction(en.Action).
			SetNillableFullTurn(en.FullTurn).SetTurnCreated(en.TurnCreated).
			SetTurnLastReferenced(en.TurnLastReferenced).SetNillableSourceStep(en.SourceStep).
			SetNillableTurnPromoted(en.TurnPromoted).SetNillableActiveReason(en.ActiveReason).
			SetNillableEnrichTable(en.EnrichTable).SetNillableEnrichNameColumn(en.EnrichNameColumn)
		if en.DetailLevel != "" {
			c.SetDetailLevel(ref.DetailLevel(en.DetailLevel))
		}
		if row := l.rows[en.Ref]; row != nil {
			ids[i] = row.ID
			c.SetID(row.ID).SetCreatedAt(row.CreatedAt)
		}
		bulk[i] = c
	}
	// Every column is written, so that clearing a value (a released reason,
	// a dequeued enrichment) reaches the row too; so the rows the builder
	// returns are the rows as stored (the immutable columns it does not
	// update were set from the loaded row). Save runs the same upsert as the
	// upsert's Exec, which discards them.
	create := tx.Ref.CreateBulk(bulk...)
	create.OnConflict(sql.ConflictColumns(ref.FieldSessionID, ref.FieldRef)).
		UpdateNewValues().
		Update(func(u *ent.RefUpsert) {
			u.UpdateEntityID().UpdateDetailLevel().UpdateFullTurn().UpdateSourceStep().
				UpdateTurnPromoted().UpdateActiveReason().UpdateEnrichTable().UpdateEnrichNameColumn()
		})
	rows, err := create.Save(ctx)
	if err != nil {
		return nil, conflictError(err)
	}
	stored := make(Stored, len(rows))
	for _, row := range rows {
		stored[row.Ref] = row
	}
	var arts []*ent.ArtifactCreate
	for i, en := range changed {
		a := en.Artifact
		if a == nil {
			continue
		}
		c := tx.Artifact.Create().SetSessionID(sessionID).SetRefID(ids[i]).SetCreatedAt(now).SetUpdatedAt(now).SetEntityType(a.EntityType).
			SetLabel(a.Label).SetContent(a.Content).SetStatus(artifact.Status(a.Status)).SetRevision(a.Revision).
			SetCreatedTurn(a.CreatedTurn).SetNillablePromotedTurn(a.PromotedTurn).SetNillableSourceStep(a.SourceStep)
		if row := l.rows[en.Ref]; row != nil && row.Edges.Artifact != nil {
			c.SetID(row.Edges.Artifact.ID).SetCreatedAt(row.Edges.Artifact.CreatedAt)
		}
		arts = append(arts, c)
	}
	if len(arts) > 0 {
		err := tx.Artifact.CreateBulk(arts...).
			OnConflict(sql.ConflictColumns(artifact.FieldSessionID, artifact.FieldRefID)).
			UpdateNewValues().Update(func(u *ent.ArtifactUpsert) { u.UpdatePromotedTurn().UpdateSourceStep() }).
			Exec(ctx)
		if err != nil {
			return nil, err
		}
	}
	return stored, nil
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
	if ent.IsConstraintError(err) {
		return apperr.New(apperr.Conflict, "the registry changed while this request ran; retry it")
	}
	return err
}
