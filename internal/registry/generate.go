package registry

import (
	"strings"

	"github.com/google/uuid"

	"sessiongraph/internal/apperr"
)

// Generate registers LLM-generated content as gen_{type}_{n} with no entity
// id yet, and keeps the content as a pending artifact (generated
// registration). An empty label is computed from the content.
func (r *Registry) Generate(t *EntityType, content map[string]any, label string, step *int) *Entry {
	if label == "" {
		label = t.Label(content)
	}
	label = r.scrubLabel(label)
	r.GenCounters[t.Name]++
	e := &Entry{
		Ref:                GenRefName(t.Name, r.GenCounters[t.Name]),
		EntityType:         t.Name,
		Label:              label,
		Action:             ActionGenerated,
		TurnCreated:        r.Turn,
		TurnLastReferenced: r.Turn,
		SourceStep:         step,
		Artifact: &Artifact{
			EntityType:  t.Name,
			Label:       label,
			Content:     content,
			Status:      ArtifactPending,
			Revision:    1,
			CreatedTurn: r.Turn,
			SourceStep:  step,
		},
	}
	r.index(e)
	r.markChanged(e)
	return e
}

// Create records that the runtime created an entity in the database (created
// registration). It promotes a generated entity when genRef names
// one, or when a pending artifact of the same type has the same label:
// the gen ref then points at the new UUID, its action becomes created, and
// its content stays (PROMOTED) until the turn ends, for linked records. With
// nothing to promote, the entity gets the next ref of its type.
func (r *Registry) Create(t *EntityType, id uuid.UUID, label, genRef string, step *int) (*Entry, error) {
	if known, ok := r.byID[id]; ok && (genRef == "" || known.Ref == genRef) {
		e, err := r.touch(t, id, ActionCreated, step)
		if err != nil {
			return nil, err
		}
		r.setLabel(e, label)
		return e, nil
	}
	gen, err := r.promotable(t, label, genRef)
	if err != nil {
		return nil, err
	}
	if gen == nil {
		e := r.register(t.Name, id, ActionCreated, step)
		r.setLabel(e, label)
		return e, nil
	}
	if other, ok := r.byID[id]; ok {
		return nil, apperr.New(apperr.Conflict, "entity %s is already registered as %s; it cannot also be %s", id, other.Ref, gen.Ref)
	}
	turn := r.Turn
	gen.EntityID = &id
	gen.Action = ActionCreated
	gen.TurnPromoted = &turn
	gen.TurnLastReferenced = turn
	gen.Artifact.Status = ArtifactPromoted
	gen.Artifact.PromotedTurn = &turn
	r.setLabel(gen, label)
	if label != "" {
		gen.Artifact.Label = gen.Label
	}
	r.index(gen)
	r.markChanged(gen)
	return gen, nil
}

// promotable returns the generated entry to promote: the one genRef names,
// or else the oldest pending artifact of the type with the same label.
func (r *Registry) promotable(t *EntityType, label, genRef string) (*Entry, error) {
	if genRef != "" {
		e, err := r.lookup(genRef, "genRef")
		if err != nil {
			return nil, err
		}
		switch {
		case !e.Generated() || e.Artifact == nil:
			return nil, apperr.New(apperr.BadUserInput, "%s is not a generated ref; only gen_ refs can be promoted", genRef)
		case e.EntityType != t.Name:
			return nil, apperr.New(apperr.BadUserInput, "%s is a %s, not a %s", genRef, e.EntityType, t.Name)
		case e.EntityID != nil:
			return nil, apperr.New(apperr.Conflict, "%s was already saved as entity %s", genRef, *e.EntityID)
		}
		return e, nil
	}
	if label == "" {
		return nil, nil
	}
	var match *Entry
	for _, e := range r.byRef {
		a := e.Artifact
		if a == nil || a.Status != ArtifactPending || e.EntityType != t.Name || !sameLabel(e.Label, label) {
			continue
		}
		if p, q := refNumber(e), refNumber(match); match == nil || p < q {
			match = e
		}
	}
	return match, nil
}

func refNumber(e *Entry) int {
	if e == nil {
		return 0
	}
	p, _ := ParseRef(e.Ref)
	return p.N
}

// Touch records a write the runtime made to entities (updated, deleted, or a
// frontend change), registering any it did not know.
func (r *Registry) Touch(t *EntityType, id uuid.UUID, action, label string, step *int) (*Entry, error) {
	e, err := r.touch(t, id, action, step)
	if err != nil {
		return nil, err
	}
	r.setLabel(e, label)
	return e, nil
}

// UpdateArtifact replaces a generated entity's content (the user asked for a
// change) and bumps its revision; the label follows the content unless one
// is given.
func (r *Registry) UpdateArtifact(t *EntityType, ref string, content map[string]any, label string) (*Entry, error) {
	e, err := r.lookup(ref, "ref")
	if err != nil {
		return nil, err
	}
	switch {
	case e.Artifact == nil:
		return nil, apperr.New(apperr.BadUserInput, "%s has no artifact to update; only generated refs keep content until their turn ends", ref)
	case e.Artifact.Status == ArtifactCleared:
		return nil, apperr.New(apperr.ArtifactCleared, "the artifact of %s was cleared; generate the content again to change it", ref)
	}
	if label == "" {
		label = t.Label(content)
	}
	a := e.Artifact
	a.Content = content
	a.Revision++
	r.setLabel(e, label)
	a.Label = e.Label
	e.TurnLastReferenced = r.Turn
	r.markChanged(e)
	return e, nil
}

// ClearArtifact ends a generated entity's artifact before its turn does (artifact
// clearing): a pending one is discarded, a promoted one
// is done with once its linked records are saved. Its content stays in the
// archive, readable by its ref; the ref itself stays, as refs always do.
func (r *Registry) ClearArtifact(ref string) (*Entry, error) {
	e, err := r.lookup(ref, "ref")
	if err != nil {
		return nil, err
	}
	switch {
	case e.Artifact == nil:
		return nil, apperr.New(apperr.BadUserInput, "%s has no generated content to clear; only gen_ refs have artifacts", ref)
	case e.Artifact.Status == ArtifactCleared:
		return nil, apperr.New(apperr.ArtifactCleared, "the artifact of %s is already cleared", ref)
	}
	e.Artifact.Status = ArtifactCleared
	r.markChanged(e)
	return e, nil
}

// sameLabel compares labels the way people write them: ignoring case and
// surrounding spaces: a generated entity is matched to its artifact by label.
func sameLabel(a, b string) bool {
	return strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b))
}
