package mcpserver

import (
	"context"

	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/internal/engine"
)

// Ref is a ref as the tools answer it: what the LLM may see, never the
// entity's id.
type Ref struct {
	Ref          string  `json:"ref"`
	EntityType   string  `json:"entityType"`
	Label        string  `json:"label"`
	Action       string  `json:"action"`
	Pending      bool    `json:"pending" jsonschema:"a generated entity not saved yet"`
	ActiveReason *string `json:"activeReason,omitempty"`
}

func refOf(r *ent.Ref) Ref {
	return Ref{Ref: r.Ref, EntityType: r.EntityType, Label: r.Label, Action: r.Action, Pending: r.EntityID == nil, ActiveReason: r.ActiveReason}
}

// RecordReadIn carries the rows a database layer read or wrote.
type RecordReadIn struct {
	SessionID  string           `json:"sessionID"`
	EntityType *string          `json:"entityType,omitempty" jsonschema:"the entity type of the records; or give table"`
	Table      *string          `json:"table,omitempty" jsonschema:"the table the records came from; or give entityType"`
	Records    []map[string]any `json:"records" jsonschema:"the records as the database returned them (at most 1,000)"`
	Step       *int             `json:"step,omitempty" jsonschema:"the pipeline step that read them"`
}

// EnrichmentRequest asks the runtime for a lazily registered ref's label.
type EnrichmentRequest struct {
	Ref        string `json:"ref"`
	EntityType string `json:"entityType"`
	EntityID   string `json:"entityID"`
	Table      string `json:"table"`
	NameColumn string `json:"nameColumn"`
}

// RecordsOut is what a read gives the LLM: the records with refs.
type RecordsOut struct {
	Records         []map[string]any    `json:"records"`
	Refs            []Ref               `json:"refs"`
	EnrichmentQueue []EnrichmentRequest `json:"enrichmentQueue"`
}

func (t *tools) recordRead(ctx context.Context, in RecordReadIn) (*RecordsOut, error) {
	return t.records(ctx, in, t.engine.Writes.RecordRead)
}

func (t *tools) recordUpdated(ctx context.Context, in RecordReadIn) (*RecordsOut, error) {
	return t.records(ctx, in, t.engine.Writes.RecordUpdated)
}

func (t *tools) records(ctx context.Context, in RecordReadIn, record func(context.Context, engine.RecordReadInput) (*engine.RecordsResult, error)) (*RecordsOut, error) {
	id, err := parseID("sessionID", in.SessionID)
	if err != nil {
		return nil, err
	}
	r, err := record(ctx, engine.RecordReadInput{SessionID: id, EntityType: in.EntityType, Table: in.Table, Records: in.Records, Step: in.Step})
	if err != nil {
		return nil, err
	}
	refs, err := t.engine.Reads.StoredRefs(ctx, id, r.Refs, r.Stored)
	if err != nil {
		return nil, err
	}
	out := &RecordsOut{Records: r.Records, Refs: refsOf(refs), EnrichmentQueue: []EnrichmentRequest{}}
	if out.Records == nil {
		out.Records = []map[string]any{}
	}
	for _, q := range r.EnrichmentQueue {
		out.EnrichmentQueue = append(out.EnrichmentQueue, EnrichmentRequest{Ref: q.Ref, EntityType: q.EntityType,
			EntityID: q.EntityID.String(), Table: q.Table, NameColumn: q.NameColumn})
	}
	return out, nil
}

func refsOf(rows []*ent.Ref) []Ref {
	out := make([]Ref, len(rows))
	for i, r := range rows {
		out[i] = refOf(r)
	}
	return out
}

// RecordGeneratedIn carries content the LLM generated.
type RecordGeneratedIn struct {
	SessionID  string         `json:"sessionID"`
	EntityType string         `json:"entityType"`
	Content    map[string]any `json:"content" jsonschema:"the generated content; it becomes a pending artifact"`
	Label      *string        `json:"label,omitempty" jsonschema:"computed from the content by the type's label rule when not given"`
	Step       *int           `json:"step,omitempty"`
}

// RefOut is the ref a write registered or changed.
type RefOut struct {
	Ref Ref `json:"ref"`
	// Promoted is true when record_created saved a generated ref.
	Promoted bool `json:"promoted"`
}

func (t *tools) recordGenerated(ctx context.Context, in RecordGeneratedIn) (*RefOut, error) {
	id, err := parseID("sessionID", in.SessionID)
	if err != nil {
		return nil, err
	}
	return t.ref(ctx)(t.engine.Writes.RecordGenerated(ctx, engine.RecordGeneratedInput{SessionID: id, EntityType: in.EntityType,
		Content: in.Content, Label: in.Label, Step: in.Step}))
}

// RecordCreatedIn says the runtime saved an entity.
type RecordCreatedIn struct {
	SessionID  string  `json:"sessionID"`
	EntityType string  `json:"entityType"`
	EntityID   string  `json:"entityID" jsonschema:"the new entity's id in your database"`
	Label      *string `json:"label,omitempty"`
	GenRef     *string `json:"genRef,omitempty" jsonschema:"the generated ref this entity saves"`
	Step       *int    `json:"step,omitempty"`
}

func (t *tools) recordCreated(ctx context.Context, in RecordCreatedIn) (*RefOut, error) {
	id, err := parseID("sessionID", in.SessionID)
	if err != nil {
		return nil, err
	}
	entityID, err := parseID("entityID", in.EntityID)
	if err != nil {
		return nil, err
	}
	return t.ref(ctx)(t.engine.Writes.RecordCreated(ctx, engine.RecordCreatedInput{SessionID: id, EntityType: in.EntityType,
		EntityID: entityID, Label: in.Label, GenRef: in.GenRef, Step: in.Step}))
}

// ref answers a write's ref as it stored it.
func (t *tools) ref(ctx context.Context) func(*engine.RefResult, error) (*RefOut, error) {
	return func(r *engine.RefResult, err error) (*RefOut, error) {
		if err != nil {
			return nil, err
		}
		row, err := t.engine.Reads.StoredRef(ctx, r.SessionID, r.Ref, r.Stored)
		if err != nil {
			return nil, err
		}
		return &RefOut{Ref: refOf(row), Promoted: r.Promoted}, nil
	}
}

// RecordDeletedIn says the runtime deleted entities.
type RecordDeletedIn struct {
	SessionID  string   `json:"sessionID"`
	EntityType string   `json:"entityType"`
	EntityIDs  []string `json:"entityIDs"`
	Step       *int     `json:"step,omitempty"`
}

// RefsOut are the refs a write touched.
type RefsOut struct {
	Refs []Ref `json:"refs"`
}

func (t *tools) recordDeleted(ctx context.Context, in RecordDeletedIn) (*RefsOut, error) {
	id, err := parseID("sessionID", in.SessionID)
	if err != nil {
		return nil, err
	}
	ids := make([]uuid.UUID, len(in.EntityIDs))
	for i, s := range in.EntityIDs {
		if ids[i], err = parseID("entityIDs", s); err != nil {
			return nil, err
		}
	}
	r, err := t.engine.Writes.RecordDeleted(ctx, engine.RecordDeletedInput{SessionID: id, EntityType: in.EntityType, EntityIDs: ids, Step: in.Step})
	if err != nil {
		return nil, err
	}
	rows, err := t.engine.Reads.StoredRefs(ctx, id, r.Refs, r.Stored)
	if err != nil {
		return nil, err
	}
	return &RefsOut{Refs: refsOf(rows)}, nil
}

// RetainRefIn keeps a ref in context.
type RetainRefIn struct {
	SessionID string `json:"sessionID"`
	Ref       string `json:"ref"`
	Reason    string `json:"reason" jsonschema:"why the ref stays in context; shown to the LLM"`
}

// ReleaseRefIn lets a retained ref go.
type ReleaseRefIn struct {
	SessionID string `json:"sessionID"`
	Ref       string `json:"ref"`
}

func (t *tools) retainRef(ctx context.Context, in RetainRefIn) (*RefOut, error) {
	id, err := parseID("sessionID", in.SessionID)
	if err != nil {
		return nil, err
	}
	return t.ref(ctx)(t.engine.Writes.RetainRef(ctx, id, in.Ref, in.Reason))
}

func (t *tools) releaseRef(ctx context.Context, in ReleaseRefIn) (*RefOut, error) {
	id, err := parseID("sessionID", in.SessionID)
	if err != nil {
		return nil, err
	}
	return t.ref(ctx)(t.engine.Writes.ReleaseRef(ctx, id, in.Ref))
}
