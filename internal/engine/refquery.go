package engine

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/ent/artifact"
	"sessiongraph/ent/ref"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/registry"
)

// Reads answers questions about a session's registry without changing it:
// refs by name or entity, filters and payloads translated, the working
// memory, step results, and nodes by id.
type Reads struct {
	client  *ent.Client
	domains *Domains
}

// readRegistry loads the selected refs of a session for a read-only
// operation; no lock, no transaction.
func (rd *Reads) readRegistry(ctx context.Context, s *ent.Session, sel selection) (*registry.Registry, *registry.Domain, error) {
	d, err := rd.domains.Domain(ctx, s.Domain)
	if err != nil {
		return nil, nil, err
	}
	r, _, err := load(ctx, rd.client.Ref, s, sel)
	return r, d, err
}

// RefsByName returns a session's refs in the order named; names it does not
// have are skipped.
func (rd *Reads) RefsByName(ctx context.Context, sessionID uuid.UUID, names []string) ([]*ent.Ref, error) {
	return rd.StoredRefs(ctx, sessionID, names, nil)
}

// StoredRefs is RefsByName for a write's payload: the refs the write stored
// come from stored, and only the others are read.
func (rd *Reads) StoredRefs(ctx context.Context, sessionID uuid.UUID, names []string, stored Stored) ([]*ent.Ref, error) {
	var missing []string
	for _, n := range names {
		if stored[n] == nil {
			missing = append(missing, n)
		}
	}
	byName := make(map[string]*ent.Ref, len(missing))
	if len(missing) > 0 {
		rows, err := rd.client.Ref.Query().Where(ref.SessionID(sessionID), ref.RefIn(missing...)).All(ctx)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			byName[r.Ref] = r
		}
	}
	out := make([]*ent.Ref, 0, len(names))
	for _, n := range names {
		if r := stored[n]; r != nil {
			out = append(out, r)
		} else if r := byName[n]; r != nil {
			out = append(out, r)
		}
	}
	return out, nil
}

// StoredRef is RefByName for a write's payload: a ref the write stored comes
// from stored.
func (rd *Reads) StoredRef(ctx context.Context, sessionID uuid.UUID, name string, stored Stored) (*ent.Ref, error) {
	if r := stored[name]; r != nil {
		return r, nil
	}
	return rd.RefByName(ctx, sessionID, name)
}

// ResolvedRef is what a ref stands for.
type ResolvedRef struct {
	Ref        string
	EntityType string
	EntityID   *uuid.UUID
	// Pending is true for a generated entity whose artifact waits to be
	// saved (not saved, not cleared).
	Pending bool
}

// ResolveRefs translates refs to entity ids for the runtime.
func (rd *Reads) ResolveRefs(ctx context.Context, s *ent.Session, refs []string) ([]*ResolvedRef, error) {
	// With their artifacts: a generated ref whose artifact was cleared
	// unsaved is no longer pending, as every build agrees.
	r, _, err := rd.readRegistry(ctx, s, selection{refs: refs, artifacts: true})
	if err != nil {
		return nil, err
	}
	out := make([]*ResolvedRef, len(refs))
	for i, name := range refs {
		en, ok := r.Entry(name)
		if !ok {
			return nil, apperr.UnknownRef(fmt.Sprintf("refs[%d]", i), name)
		}
		out[i] = &ResolvedRef{Ref: en.Ref, EntityType: en.EntityType, EntityID: en.EntityID, Pending: en.Pending()}
	}
	return out, nil
}

// FilterInput is one condition of a runtime query.
type FilterInput struct {
	Field string
	Op    string
	Value any
}

// TranslatedFilters are filters ready for the database, and the generated
// refs to answer with readRefs instead.
type TranslatedFilters struct {
	Filters     []FilterInput
	PendingRefs []string
}

// TranslateFilters turns refs into UUIDs in the id and FK fields of filters
// on the entity type entityType or table names.
func (rd *Reads) TranslateFilters(ctx context.Context, s *ent.Session, entityType, table *string, filters []*FilterInput) (*TranslatedFilters, error) {
	in := make([]registry.Filter, len(filters))
	var names []string
	for i, f := range filters {
		in[i] = registry.Filter{Field: f.Field, Op: f.Op, Value: f.Value}
		names = append(names, registry.RefsIn(f.Value)...)
	}
	r, d, err := rd.readRegistry(ctx, s, selection{refs: names})
	if err != nil {
		return nil, err
	}
	t, err := typeByNameOrTable(d, entityType, table)
	if err != nil {
		return nil, err
	}
	tr, err := r.TranslateFilters(t, in)
	if err != nil {
		return nil, err
	}
	out := &TranslatedFilters{Filters: make([]FilterInput, len(tr.Filters)), PendingRefs: nonNil(tr.Pending)}
	for i, f := range tr.Filters {
		out.Filters[i] = FilterInput{Field: f.Field, Op: f.Op, Value: f.Value}
	}
	return out, nil
}

// TranslatePayload turns refs into UUIDs in a record about to be written.
func (rd *Reads) TranslatePayload(ctx context.Context, s *ent.Session, entityType string, data map[string]any) (*registry.TranslatedPayload, error) {
	r, d, err := rd.readRegistry(ctx, s, selection{refs: registry.RefsIn(data)})
	if err != nil {
		return nil, err
	}
	t, err := d.Type(entityType)
	if err != nil {
		return nil, err
	}
	out, err := r.TranslatePayload(d, t, data)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// ReadRefsResult answers a read of refs: generated ones from their
// artifacts, the rest left for the database.
type ReadRefsResult struct {
	Records      []map[string]any
	FromDatabase []string
}

// ReadRefs answers reads of generated refs from their artifacts in db_read
// shape (read rerouting).
func (rd *Reads) ReadRefs(ctx context.Context, s *ent.Session, refs []string) (*ReadRefsResult, error) {
	r, d, err := rd.readRegistry(ctx, s, selection{refs: refs, artifacts: true})
	if err != nil {
		return nil, err
	}
	records, fromDB, err := r.ReadRefs(d, refs)
	if err != nil {
		return nil, err
	}
	return &ReadRefsResult{Records: nonNil(records), FromDatabase: nonNil(fromDB)}, nil
}

// EnrichmentQueue lists the session's refs still waiting for a label.
func (rd *Reads) EnrichmentQueue(ctx context.Context, s *ent.Session) ([]*EnrichmentRequest, error) {
	rows, err := rd.client.Ref.Query().
		Where(ref.SessionID(s.ID), ref.EnrichTableNotNil()).Order(ref.ByCreatedAt(), ref.ByRef()).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*EnrichmentRequest, len(rows))
	for i, row := range rows {
		req := enrichmentRequest(toEntry(row))
		out[i] = &req
	}
	return out, nil
}

// ActiveEntities are a session's refs by tier.
type ActiveEntities struct {
	Active, Generated, Retained []*ent.Ref
}

// ActiveEntities sorts the refs that matter now into tiers, reading only
// those: referenced within the window (nil: registry.DefaultWindow),
// retained, or pending generation.
func (rd *Reads) ActiveEntities(ctx context.Context, s *ent.Session, turnsWindow *int) (*ActiveEntities, error) {
	window := registry.DefaultWindow
	if turnsWindow != nil {
		window = *turnsWindow
	}
	if window < 1 {
		return nil, apperr.Invalid("turnsWindow", "turnsWindow must be at least 1, got %d", window)
	}
	rows, err := rd.client.Ref.Query().Where(liveRefs(s, window)).WithArtifact(inSession(s.ID)).
		Order(ent.Asc(ref.FieldTurnLastReferenced), ent.Asc(ref.FieldTurnCreated), ent.Asc(ref.FieldRef)).All(ctx)
	if err != nil {
		return nil, err
	}
	byRef := make(map[string]*ent.Ref, len(rows))
	entries := make([]*registry.Entry, len(rows))
	for i, row := range rows {
		byRef[row.Ref], entries[i] = row, toEntry(row)
	}
	tiers := registry.SortTiers(entries, s.CurrentTurn, window)
	pick := func(es []*registry.Entry) []*ent.Ref {
		out := make([]*ent.Ref, len(es))
		for i, en := range es {
			out[i] = byRef[en.Ref]
		}
		return out
	}
	return &ActiveEntities{Active: pick(tiers.Active), Generated: pick(tiers.Generated), Retained: pick(tiers.Retained)}, nil
}

// RefByName returns one ref of a session.
func (rd *Reads) RefByName(ctx context.Context, sessionID uuid.UUID, name string) (*ent.Ref, error) {
	return rd.client.Ref.Query().Where(ref.SessionID(sessionID), ref.Ref(name)).Only(ctx)
}

// RefArtifact returns a ref's artifact (nil if it has none): the one
// loaded with the ref, else read by the ref's session and id, which on
// Citus asks the session's shard only (ent's edge query goes by the ref's
// id alone and asks every shard).
func (rd *Reads) RefArtifact(ctx context.Context, r *ent.Ref) (*ent.Artifact, error) {
	if a, err := r.Edges.ArtifactOrErr(); !ent.IsNotLoaded(err) {
		return a, ent.MaskNotFound(err)
	}
	a, err := rd.client.Artifact.Query().Where(artifact.SessionID(r.SessionID), artifact.RefID(r.ID)).Only(ctx)
	return a, ent.MaskNotFound(err)
}
