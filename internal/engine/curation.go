package engine

// This file holds what Understand and the runtime curate: mentions,
// artifact revisions, enrichment labels, and retention.

import (
	"context"

	"github.com/google/uuid"

	"sessiongraph/internal/apperr"
	"sessiongraph/internal/registry"
	"sessiongraph/internal/store"
)

// MentionEntity records that refs were referred to this turn (Understand's
// reference resolution), which keeps them in the active window.
func (wr *Writes) MentionEntity(ctx context.Context, sessionID uuid.UUID, refs []string) (*RefsResult, error) {
	if len(refs) == 0 || len(refs) > MaxListItems {
		return nil, apperr.Invalid("refs", "give between 1 and %d refs", MaxListItems)
	}
	rw, err := wr.beginRegistry(ctx, nil, sessionID, selection{refs: refs})
	if err != nil {
		return nil, err
	}
	defer rw.Rollback()
	if err := rw.reg.Mention(refs); err != nil {
		return nil, err
	}
	ev := store.Event{Kind: KindRefsMentioned, Payload: map[string]any{"changes": changes(rw.reg.Changed())}}
	stored, err := wr.commitRegistry(ctx, rw, ev, nil)
	if err != nil {
		return nil, err
	}
	return &RefsResult{SessionID: sessionID, Refs: refs, Stored: stored}, nil
}

// UpdateArtifactInput replaces a generated entity's content.
type UpdateArtifactInput struct {
	SessionID uuid.UUID
	Ref       string
	Content   map[string]any
	Label     *string
}

// UpdateArtifact revises a generated entity's content (revision + 1).
func (wr *Writes) UpdateArtifact(ctx context.Context, in UpdateArtifactInput) (*RefResult, error) {
	label, err := optionalLabel(in.Label)
	if err != nil {
		return nil, err
	}
	rw, err := wr.beginRegistry(ctx, nil, in.SessionID, selection{refs: []string{in.Ref}, artifacts: true})
	if err != nil {
		return nil, err
	}
	defer rw.Rollback()
	en, ok := rw.reg.Entry(in.Ref)
	if !ok {
		return nil, apperr.UnknownRef("ref", in.Ref)
	}
	t, err := rw.domain.Type(en.EntityType)
	if err != nil {
		return nil, err
	}
	if _, err := rw.reg.UpdateArtifact(t, in.Ref, in.Content, label); err != nil {
		return nil, err
	}
	en.Label = truncate(en.Label, maxLabelLen)
	en.Artifact.Label = en.Label
	ev := store.Event{Kind: KindArtifactRevised, Payload: map[string]any{
		"ref": in.Ref, "revision": en.Artifact.Revision, "changes": changes(rw.reg.Changed())}}
	stored, err := wr.commitRegistry(ctx, rw, ev, nil)
	if err != nil {
		return nil, err
	}
	return &RefResult{SessionID: in.SessionID, Ref: in.Ref, Stored: stored}, nil
}

// EnrichmentLabel is a label the runtime looked up for a queued ref.
type EnrichmentLabel struct {
	Ref   string
	Label string
}

// ApplyEnrichmentInput carries looked-up labels and, optionally, the
// translated records of the read that queued them.
type ApplyEnrichmentInput struct {
	SessionID uuid.UUID
	Labels    []*EnrichmentLabel
	Records   []map[string]any
	// EntityType or Table names the records' type, when records are given.
	EntityType *string
	Table      *string
}

// EnrichmentResult names the labelled refs and returns the records with
// their FK labels added.
type EnrichmentResult struct {
	SessionID uuid.UUID
	Refs      []string
	Records   []map[string]any
	// Stored are the refs as the write stored them.
	Stored Stored
}

// ApplyEnrichment sets looked-up labels and takes the refs out of the queue;
// given the records of the read that queued them, it returns those records
// with _<field>_label added, as the LLM should see them.
func (wr *Writes) ApplyEnrichment(ctx context.Context, in ApplyEnrichmentInput) (*EnrichmentResult, error) {
	if len(in.Labels) == 0 || len(in.Labels) > MaxListItems {
		return nil, apperr.Invalid("labels", "give between 1 and %d labels", MaxListItems)
	}
	if len(in.Records) > MaxListItems {
		return nil, apperr.TooLarge("records", "%d records in one call; at most %d are allowed", len(in.Records), MaxListItems)
	}
	if len(in.Records) > 0 && in.EntityType == nil && in.Table == nil {
		return nil, errNoTypeName() // the records' FK fields depend on their type
	}
	out := &EnrichmentResult{SessionID: in.SessionID, Records: []map[string]any{}}
	enrich := make([]registry.Enrichment, len(in.Labels))
	for i, l := range in.Labels {
		if len(l.Label) > maxLabelLen {
			return nil, apperr.TooLarge("labels", "the label for %s is %d bytes; at most %d are allowed", l.Ref, len(l.Label), maxLabelLen)
		}
		out.Refs = append(out.Refs, l.Ref)
		enrich[i] = registry.Enrichment{Ref: l.Ref, Label: l.Label}
	}
	rw, err := wr.beginRegistry(ctx, nil, in.SessionID, selection{refs: append(registry.RefsIn(in.Records), out.Refs...)})
	if err != nil {
		return nil, err
	}
	defer rw.Rollback()
	if _, err := rw.reg.ApplyEnrichment(enrich); err != nil {
		return nil, err
	}
	if len(in.Records) > 0 {
		t, err := typeByNameOrTable(rw.domain, in.EntityType, in.Table)
		if err != nil {
			return nil, err
		}
		out.Records = rw.reg.AddEnrichedLabels(rw.domain, t, in.Records)
	}
	ev := store.Event{Kind: KindRefsEnriched, Payload: map[string]any{"changes": changes(rw.reg.Changed())}}
	if out.Stored, err = wr.commitRegistry(ctx, rw, ev, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// RetainRef keeps a ref active past the turn window with Understand's reason.
func (wr *Writes) RetainRef(ctx context.Context, sessionID uuid.UUID, ref, reason string) (*RefResult, error) {
	if len(reason) > maxLabelLen {
		return nil, apperr.TooLarge("reason", "the reason is %d bytes; at most %d are allowed", len(reason), maxLabelLen)
	}
	rw, err := wr.beginRegistry(ctx, nil, sessionID, selection{refs: []string{ref}})
	if err != nil {
		return nil, err
	}
	defer rw.Rollback()
	if _, err := rw.reg.Retain(ref, reason); err != nil {
		return nil, err
	}
	stored, err := wr.commitRegistry(ctx, rw, store.Event{Kind: KindRefRetained, Payload: map[string]any{"ref": ref, "reason": reason}}, nil)
	if err != nil {
		return nil, err
	}
	return &RefResult{SessionID: sessionID, Ref: ref, Stored: stored}, nil
}

// ReleaseRef lets a retained ref fall out of context.
func (wr *Writes) ReleaseRef(ctx context.Context, sessionID uuid.UUID, ref string) (*RefResult, error) {
	rw, err := wr.beginRegistry(ctx, nil, sessionID, selection{refs: []string{ref}})
	if err != nil {
		return nil, err
	}
	defer rw.Rollback()
	if _, err := rw.reg.Release(ref); err != nil {
		return nil, err
	}
	stored, err := wr.commitRegistry(ctx, rw, store.Event{Kind: KindRefReleased, Payload: map[string]any{"ref": ref}}, nil)
	if err != nil {
		return nil, err
	}
	return &RefResult{SessionID: sessionID, Ref: ref, Stored: stored}, nil
}
