// Package registry holds the rules of a session's ref registry: how refs are named and numbered, how records read from the database
// are translated for an LLM, how generated entities are registered and
// promoted, and how refs are translated back to UUIDs. It is plain Go: the
// engine loads the part of a session's registry a request touches into a
// Registry, applies an operation, and persists what Changed reports.
package registry

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/google/uuid"

	"sessiongraph/internal/apperr"
)

// Entry is one ref of a session.
type Entry struct {
	Ref                string
	EntityType         string
	EntityID           *uuid.UUID // nil while a generated entity is not saved
	Label              string
	Action             string
	DetailLevel        string // DetailFull, DetailSummary or ""
	FullTurn           *int
	TurnCreated        int
	TurnLastReferenced int
	SourceStep         *int
	TurnPromoted       *int
	ActiveReason       *string
	EnrichTable        *string // set while queued for enrichment
	EnrichNameColumn   *string
	Artifact           *Artifact
}

// Generated reports whether the entry is a gen_ ref.
func (e *Entry) Generated() bool {
	p, _ := ParseRef(e.Ref)
	return p.Generated
}

// Pending reports whether the entry is generated and not saved yet: a
// pending artifact, known without loading it.
func (e *Entry) Pending() bool {
	if e.Artifact != nil {
		return e.Artifact.Status == ArtifactPending
	}
	return e.EntityID == nil && e.Generated()
}

// Queued reports whether the entry waits for its label in the enrichment queue.
func (e *Entry) Queued() bool { return e.EnrichTable != nil }

// Artifact statuses.
const (
	ArtifactPending  = "PENDING"
	ArtifactPromoted = "PROMOTED"
	ArtifactCleared  = "CLEARED"
)

// Artifact is the content of a generated entity (a pending
// artifact), kept until the turn that saves it ends.
type Artifact struct {
	EntityType   string
	Label        string
	Content      map[string]any
	Status       string
	Revision     int
	CreatedTurn  int
	PromotedTurn *int
	SourceStep   *int
}

// Registry is the part of one session's registry that an operation needs,
// plus the session's counters. It is not safe for concurrent use; the engine
// builds one per request under the session lock.
type Registry struct {
	// Turn is the session's current turn.
	Turn int
	// Counters and GenCounters hold the last number given per type.
	Counters    map[string]int
	GenCounters map[string]int

	byRef   map[string]*Entry
	byID    map[uuid.UUID]*Entry
	changed map[string]bool
	order   []string // changed refs, first change first
	// stopped says why a long operation should stop early (see StopWhen).
	stopped func() error
}

// StopWhen makes the registry's long operations (Read over many records)
// stop with ctx's error once ctx is done: they run inside the session's
// transaction, and a request whose deadline passed or whose client left
// should release the session's lock rather than finish work nobody reads.
func (r *Registry) StopWhen(ctx context.Context) { r.stopped = ctx.Err }

// stop returns why the current operation should stop, or nil.
func (r *Registry) stop() error {
	if r.stopped == nil {
		return nil
	}
	return r.stopped()
}

// New returns a registry at turn with the session's counters and the entries
// loaded for the operation.
func New(turn int, counters, genCounters map[string]int, entries ...*Entry) *Registry {
	r := &Registry{
		Turn:        turn,
		Counters:    maps.Clone(counters),
		GenCounters: maps.Clone(genCounters),
		byRef:       map[string]*Entry{},
		byID:        map[uuid.UUID]*Entry{},
		changed:     map[string]bool{},
	}
	if r.Counters == nil {
		r.Counters = map[string]int{}
	}
	if r.GenCounters == nil {
		r.GenCounters = map[string]int{}
	}
	for _, e := range entries {
		r.index(e)
	}
	return r
}

func (r *Registry) index(e *Entry) {
	r.byRef[e.Ref] = e
	if e.EntityID != nil {
		r.byID[*e.EntityID] = e
	}
}

// Entry returns the loaded entry of a ref.
func (r *Registry) Entry(ref string) (*Entry, bool) {
	e, ok := r.byRef[ref]
	return e, ok
}

// ByEntityID returns the loaded entry of an entity.
func (r *Registry) ByEntityID(id uuid.UUID) (*Entry, bool) {
	e, ok := r.byID[id]
	return e, ok
}

// Changed returns the entries the operations changed or created, in the
// order they were first touched.
func (r *Registry) Changed() []*Entry {
	out := make([]*Entry, len(r.order))
	for i, ref := range r.order {
		out[i] = r.byRef[ref]
	}
	return out
}

func (r *Registry) markChanged(e *Entry) {
	if !r.changed[e.Ref] {
		r.changed[e.Ref] = true
		r.order = append(r.order, e.Ref)
	}
}

// lookup returns the entry of a ref, or REF_NOT_FOUND naming the input field
// that gave it.
func (r *Registry) lookup(ref, field string) (*Entry, error) {
	if e, ok := r.byRef[ref]; ok {
		return e, nil
	}
	return nil, apperr.UnknownRef(field, ref)
}

// register gives a new database entity the next ref of its type.
func (r *Registry) register(entityType string, id uuid.UUID, action string, step *int) *Entry {
	r.Counters[entityType]++
	e := &Entry{
		Ref:                RefName(entityType, r.Counters[entityType]),
		EntityType:         entityType,
		EntityID:           &id,
		Action:             action,
		TurnCreated:        r.Turn,
		TurnLastReferenced: r.Turn,
		SourceStep:         step,
	}
	r.index(e)
	r.markChanged(e)
	return e
}

// touch records that an entity was seen with an action this turn: it reuses
// the entity's ref or registers the next one.
func (r *Registry) touch(t *EntityType, id uuid.UUID, action string, step *int) (*Entry, error) {
	e, ok := r.byID[id]
	if !ok {
		return r.register(t.Name, id, action, step), nil
	}
	if e.EntityType != t.Name {
		return nil, apperr.New(apperr.Conflict, "entity %s is already registered as %s, a %s, not a %s", id, e.Ref, e.EntityType, t.Name)
	}
	e.Action = action
	e.TurnLastReferenced = r.Turn
	r.markChanged(e)
	return e, nil
}

// setLabel sets a known label; an empty label leaves the old one, and a
// labelled entry leaves the enrichment queue.
func (r *Registry) setLabel(e *Entry, label string) {
	if label == "" {
		return
	}
	e.Label = r.scrubLabel(label)
	e.EnrichTable, e.EnrichNameColumn = nil, nil
	r.markChanged(e)
}

// scrubLabel removes UUIDs from a label: labels stand next to refs in every
// prompt.
func (r *Registry) scrubLabel(label string) string { return r.scrub(label).(string) }

// Mention records that refs were referred to this turn, keeping their actions.
func (r *Registry) Mention(refs []string) error {
	for i, ref := range refs {
		e, err := r.lookup(ref, fmt.Sprintf("refs[%d]", i))
		if err != nil {
			return err
		}
		e.TurnLastReferenced = r.Turn
		r.markChanged(e)
	}
	return nil
}

// Retain keeps a ref active past the turn window, with Understand's reason.
func (r *Registry) Retain(ref, reason string) (*Entry, error) {
	if reason == "" {
		return nil, apperr.New(apperr.BadUserInput, "a reason is required to retain %s: say why it stays relevant", ref)
	}
	e, err := r.lookup(ref, "ref")
	if err != nil {
		return nil, err
	}
	e.ActiveReason = &reason
	r.markChanged(e)
	return e, nil
}

// Release lets a retained ref fall out of context again.
func (r *Registry) Release(ref string) (*Entry, error) {
	e, err := r.lookup(ref, "ref")
	if err != nil {
		return nil, err
	}
	e.ActiveReason = nil
	r.markChanged(e)
	return e, nil
}

// Enrichment is a label found for a ref in the enrichment queue.
type Enrichment struct {
	Ref   string
	Label string
}

// ApplyEnrichment sets the labels the runtime looked up and takes the refs
// out of the queue.
func (r *Registry) ApplyEnrichment(labels []Enrichment) ([]*Entry, error) {
	out := make([]*Entry, 0, len(labels))
	for i, l := range labels {
		e, err := r.lookup(l.Ref, fmt.Sprintf("labels[%d].ref", i))
		if err != nil {
			return nil, err
		}
		if l.Label == "" {
			return nil, apperr.New(apperr.BadUserInput, "the label for %s is empty", l.Ref)
		}
		r.setLabel(e, l.Label)
		out = append(out, e)
	}
	return out, nil
}

// sortedKeys returns a map's keys in order, for deterministic output.
func sortedKeys[V any](m map[string]V) []string {
	// One array of the right size: slices.Sorted(maps.Keys(m)) grows its
	// slice from nothing, several allocations for every record read.
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
