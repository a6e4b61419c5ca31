package engine

import (
	"context"
	"encoding/json"
	"unicode/utf8"

	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/ent/stepresult"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/registry"
	"sessiongraph/internal/store"
)

// RecordReadInput carries records the runtime read from (or wrote to) the
// database, of the entity type EntityType or Table names.
type RecordReadInput struct {
	SessionID  uuid.UUID
	EntityType *string
	Table      *string
	Records    []map[string]any
	Step       *int
}

// RecordsResult is what an agent needs after a read: the records as the LLM
// should see them, the refs they touched, and the refs waiting for a label.
type RecordsResult struct {
	SessionID uuid.UUID
	Records   []map[string]any
	// RecordsJSON is each of Records encoded once, when the write made
	// them: the step's data and the API's answer are these bytes, so a
	// record is not encoded again for each.
	RecordsJSON     []json.RawMessage
	Refs            []string
	EnrichmentQueue []EnrichmentRequest
	// Stored are the refs as the write stored them.
	Stored Stored
	// Session is the session as the write left it: Context builds from it
	// what a read of the session right after the write would give, for a
	// build in the write's answer. Nil within a larger write, which answers
	// no build.
	Session *ent.Session
}

// EnrichmentRequest asks the runtime to look up a lazily registered ref's
// label: SELECT NameColumn FROM Table WHERE id = EntityID.
type EnrichmentRequest struct {
	Ref        string
	EntityType string
	EntityID   uuid.UUID
	Table      string
	NameColumn string
}

// RecordRead registers records read from the database and returns them translated for the LLM. With a
// step, the translated records are that step's data (a READ step).
func (wr *Writes) RecordRead(ctx context.Context, in RecordReadInput) (*RecordsResult, error) {
	return wr.recordRecords(ctx, nil, in, registry.ActionRead, KindRefsRead, stepresult.KindRead)
}

// RecordUpdated registers records the runtime updated, as RecordRead does,
// with the action updated (a WRITE step).
func (wr *Writes) RecordUpdated(ctx context.Context, in RecordReadInput) (*RecordsResult, error) {
	return wr.recordRecords(ctx, nil, in, registry.ActionUpdated, KindRefsUpdated, stepresult.KindWrite)
}

// recordRecords is RecordRead and RecordUpdated, as a write of its own
// (within nil) or within a shared one.
func (wr *Writes) recordRecords(ctx context.Context, within *sharedWrite, in RecordReadInput, action, kind string, stepKind stepresult.Kind) (*RecordsResult, error) {
	if len(in.Records) > MaxListItems {
		return nil, apperr.TooLarge("records", "%d records in one call; at most %d are allowed: split the call", len(in.Records), MaxListItems)
	}
	if err := checkStep(in.Step); err != nil {
		return nil, err
	}
	rw, err := wr.beginRegistry(ctx, within, in.SessionID, selection{entityIDs: registry.UUIDsIn(in.Records)})
	if err != nil {
		return nil, err
	}
	defer rw.Rollback()
	t, err := typeByNameOrTable(rw.domain, in.EntityType, in.Table)
	if err != nil {
		return nil, err
	}
	out, ev, items, err := readRecords(rw.reg, rw.domain, t, in, action, kind, stepKind)
	if err != nil {
		return nil, err
	}
	if out.Stored, err = wr.commitRegistry(ctx, rw, ev, items); err != nil {
		return nil, err
	}
	out.Session = rw.after
	return out, nil
}

// readRecords applies a read's rules to r: the records' entities and their
// foreign keys get refs (new ones in order, known ones touched with
// action), and the records come back as the LLM sees them, with the refs
// touched, those waiting for a label, the event and the step's items.
func readRecords(r *registry.Registry, d *registry.Domain, t *registry.EntityType, in RecordReadInput,
	action, kind string, stepKind stepresult.Kind) (*RecordsResult, store.Event, *stepItems, error) {
	out := &RecordsResult{SessionID: in.SessionID}
	var err error
	if out.Records, err = r.Read(d, t, in.Records, action, in.Step); err != nil {
		return nil, store.Event{}, nil, err
	}
	for _, en := range r.Changed() {
		en.Label = truncate(en.Label, maxLabelLen)
		out.Refs = append(out.Refs, en.Ref)
		if en.Queued() {
			out.EnrichmentQueue = append(out.EnrichmentQueue, enrichmentRequest(en))
		}
	}
	out.RecordsJSON = make([]json.RawMessage, len(out.Records))
	for i, rec := range out.Records {
		if out.RecordsJSON[i], err = json.Marshal(rec); err != nil {
			return nil, store.Event{}, nil, err
		}
	}
	ev := store.Event{Kind: kind, Payload: map[string]any{"table": t.Table, "changes": changes(r.Changed())}}
	return out, ev, forStepEncoded(in.Step, stepKind, out.RecordsJSON, out.Refs), nil
}

// RecordGeneratedInput carries content the LLM generated.
type RecordGeneratedInput struct {
	SessionID  uuid.UUID
	EntityType string
	Content    map[string]any
	Label      *string
	Step       *int
}

// RefResult names the ref a write registered or changed.
type RefResult struct {
	SessionID uuid.UUID
	Ref       string
	// Promoted is true when recordCreated saved a generated ref.
	Promoted bool
	// Stored are the refs as the write stored them.
	Stored Stored
}

// RecordGenerated registers generated content as gen_{type}_{n} with a
// pending artifact.
func (wr *Writes) RecordGenerated(ctx context.Context, in RecordGeneratedInput) (*RefResult, error) {
	return wr.recordGenerated(ctx, nil, in)
}

// recordGenerated is RecordGenerated, as a write of its own (within nil) or within a
// shared one.
func (wr *Writes) recordGenerated(ctx context.Context, within *sharedWrite, in RecordGeneratedInput) (*RefResult, error) {
	label, err := optionalLabel(in.Label)
	if err != nil {
		return nil, err
	}
	if err := checkStep(in.Step); err != nil {
		return nil, err
	}
	var sel selection
	if in.Step != nil { // the step's copy of the content carries refs for the UUIDs it names
		sel.entityIDs = registry.UUIDsIn(in.Content)
	}
	rw, err := wr.beginRegistry(ctx, within, in.SessionID, sel)
	if err != nil {
		return nil, err
	}
	defer rw.Rollback()
	t, err := rw.domain.Type(in.EntityType)
	if err != nil {
		return nil, err
	}
	en := rw.reg.Generate(t, in.Content, label, in.Step)
	en.Label = truncate(en.Label, maxLabelLen)
	en.Artifact.Label = en.Label
	item, err := rw.reg.AsRecord(rw.domain, en)
	if err != nil {
		return nil, err
	}
	ev := store.Event{Kind: KindArtifactGenerated, Payload: map[string]any{"changes": changes(rw.reg.Changed())}}
	out := &RefResult{SessionID: in.SessionID, Ref: en.Ref}
	items, err := forStep(in.Step, stepresult.KindGenerate, []any{item}, []string{en.Ref})
	if err != nil {
		return nil, err
	}
	if out.Stored, err = wr.commitRegistry(ctx, rw, ev, items); err != nil {
		return nil, err
	}
	return out, nil
}

// RecordCreatedInput says the runtime created an entity in the database.
type RecordCreatedInput struct {
	SessionID  uuid.UUID
	EntityType string
	EntityID   uuid.UUID
	Label      *string
	GenRef     *string
	Step       *int
}

// RecordCreated promotes the named or matching generated ref to the new
// entity, or registers the entity under the next ref of its type.
func (wr *Writes) RecordCreated(ctx context.Context, in RecordCreatedInput) (*RefResult, error) {
	return wr.recordCreated(ctx, nil, in)
}

// recordCreated is RecordCreated, as a write of its own (within nil) or within a
// shared one.
func (wr *Writes) recordCreated(ctx context.Context, within *sharedWrite, in RecordCreatedInput) (*RefResult, error) {
	label, err := optionalLabel(in.Label)
	if err != nil {
		return nil, err
	}
	if err := checkStep(in.Step); err != nil {
		return nil, err
	}
	sel := selection{entityIDs: []uuid.UUID{in.EntityID}, pendingOf: in.EntityType, pendingLabel: label, artifacts: true}
	if in.GenRef != nil {
		sel.refs = []string{*in.GenRef}
	}
	rw, err := wr.beginRegistry(ctx, within, in.SessionID, sel)
	if err != nil {
		return nil, err
	}
	defer rw.Rollback()
	t, err := rw.domain.Type(in.EntityType)
	if err != nil {
		return nil, err
	}
	en, err := rw.reg.Create(t, in.EntityID, label, deref(in.GenRef), in.Step)
	if err != nil {
		return nil, err
	}
	out := &RefResult{SessionID: in.SessionID, Ref: en.Ref, Promoted: en.Generated()}
	kind := KindRefCreated
	if out.Promoted {
		kind = KindRefPromoted
	}
	ev := store.Event{Kind: kind, Payload: map[string]any{"changes": changes(rw.reg.Changed())}}
	items, err := forStep(in.Step, stepresult.KindWrite, []any{registry.WrittenItem(t, en)}, []string{en.Ref})
	if err != nil {
		return nil, err
	}
	if out.Stored, err = wr.commitRegistry(ctx, rw, ev, items); err != nil {
		return nil, err
	}
	return out, nil
}

// RecordDeletedInput says the runtime deleted entities.
type RecordDeletedInput struct {
	SessionID  uuid.UUID
	EntityType string
	EntityIDs  []uuid.UUID
	Step       *int
}

// RefsResult names the refs a write touched.
type RefsResult struct {
	SessionID uuid.UUID
	Refs      []string
	// Stored are the refs as the write stored them.
	Stored Stored
}

// RecordDeleted tags the entities deleted; unknown ones are registered so
// the LLM can still say what was deleted.
func (wr *Writes) RecordDeleted(ctx context.Context, in RecordDeletedInput) (*RefsResult, error) {
	return wr.recordDeleted(ctx, nil, in)
}

// recordDeleted is RecordDeleted, as a write of its own (within nil) or within a
// shared one.
func (wr *Writes) recordDeleted(ctx context.Context, within *sharedWrite, in RecordDeletedInput) (*RefsResult, error) {
	if len(in.EntityIDs) > MaxListItems {
		return nil, apperr.TooLarge("entityIDs", "%d ids in one call; at most %d are allowed", len(in.EntityIDs), MaxListItems)
	}
	if err := checkStep(in.Step); err != nil {
		return nil, err
	}
	rw, err := wr.beginRegistry(ctx, within, in.SessionID, selection{entityIDs: in.EntityIDs})
	if err != nil {
		return nil, err
	}
	defer rw.Rollback()
	t, err := rw.domain.Type(in.EntityType)
	if err != nil {
		return nil, err
	}
	out := &RefsResult{SessionID: in.SessionID}
	var items []any
	for _, id := range in.EntityIDs {
		en, err := rw.reg.Touch(t, id, registry.ActionDeleted, "", in.Step)
		if err != nil {
			return nil, err
		}
		out.Refs = append(out.Refs, en.Ref)
		items = append(items, registry.WrittenItem(t, en))
	}
	ev := store.Event{Kind: KindRefsDeleted, Payload: map[string]any{"changes": changes(rw.reg.Changed())}}
	add, err := forStep(in.Step, stepresult.KindWrite, items, out.Refs)
	if err != nil {
		return nil, err
	}
	if out.Stored, err = wr.commitRegistry(ctx, rw, ev, add); err != nil {
		return nil, err
	}
	return out, nil
}

// RecordUserActionInput reports a change the user made in the frontend.
type RecordUserActionInput struct {
	SessionID  uuid.UUID
	Kind       registry.UserKind
	EntityType string
	EntityID   uuid.UUID
	Label      *string
}

// RecordUserAction tags an entity with created:user, updated:user,
// deleted:user or mentioned:user, registering it when new.
func (wr *Writes) RecordUserAction(ctx context.Context, in RecordUserActionInput) (*RefResult, error) {
	label, err := optionalLabel(in.Label)
	if err != nil {
		return nil, err
	}
	rw, err := wr.beginRegistry(ctx, nil, in.SessionID, selection{entityIDs: []uuid.UUID{in.EntityID}})
	if err != nil {
		return nil, err
	}
	defer rw.Rollback()
	t, err := rw.domain.Type(in.EntityType)
	if err != nil {
		return nil, err
	}
	en, err := rw.reg.Touch(t, in.EntityID, registry.UserAction(in.Kind), label, nil)
	if err != nil {
		return nil, err
	}
	out := &RefResult{SessionID: in.SessionID, Ref: en.Ref}
	ev := store.Event{Kind: KindRefUserAction, Payload: map[string]any{"changes": changes(rw.reg.Changed())}}
	if out.Stored, err = wr.commitRegistry(ctx, rw, ev, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// refChange is one changed ref in an event payload. Its fields are in the
// order of their JSON names, so that it is written as the map it replaces
// was (json.Marshal sorts a map's keys): a struct costs the payload one
// allocation for all the refs where a map per ref cost several each.
type refChange struct {
	Action     string `json:"action"`
	EntityType string `json:"entityType"`
	Ref        string `json:"ref"`
}

// changes summarizes changed refs for an event payload.
func changes(entries []*registry.Entry) []refChange {
	out := make([]refChange, len(entries))
	for i, en := range entries {
		out[i] = refChange{Ref: en.Ref, EntityType: en.EntityType, Action: en.Action}
	}
	return out
}

func enrichmentRequest(en *registry.Entry) EnrichmentRequest {
	return EnrichmentRequest{Ref: en.Ref, EntityType: en.EntityType, EntityID: *en.EntityID,
		Table: deref(en.EnrichTable), NameColumn: deref(en.EnrichNameColumn)}
}

func optionalLabel(label *string) (string, error) {
	if label == nil {
		return "", nil
	}
	if len(*label) > maxLabelLen {
		return "", apperr.TooLarge("label", "the label is %d bytes; at most %d are allowed", len(*label), maxLabelLen)
	}
	return *label, nil
}

// truncate cuts a computed label to at most n bytes, on a rune boundary,
// and marks the cut with "…". It looks at no more than the few bytes around
// the cut, however long the label: a label is cut inside the session's
// transaction, while other writes to the session wait.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
