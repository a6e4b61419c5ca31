package engine

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"strings"

	"sessiongraph/ent"
	"sessiongraph/internal/contextbuild"
	"sessiongraph/internal/registry"
	"sessiongraph/internal/tokenizer"
)

// This file patches a remembered build across the registry writes this
// replica committed since: the build after a small write costs in
// proportion to the write, not to the session. A patched build is made by
// contextbuild.Make from exactly the inputs a read of the rows would give,
// so it is the same build, byte for byte; whatever is not known exactly
// makes the build from the rows instead.

// buildInputs are what a build was made from: the snapshot as read (the
// refs before their artifacts' UUIDs are scrubbed), the session's fields
// the build reads, and whether the refs' read was complete (it stopped
// before maxContextRefs).
type buildInputs struct {
	snap     contextbuild.Snapshot
	session  buildSession
	complete bool
}

// buildSession holds the session's fields a build reads; a patch applies
// only while they are all unchanged.
type buildSession struct {
	currentTurn, failedTurns, tokenCount                int
	systemPrompt, tokenizer                             string
	engagementSummary, historySummary, reasoningSummary string
	pendingClarification                                map[string]any
}

func buildSessionOf(s *ent.Session) buildSession {
	return buildSession{
		currentTurn: s.CurrentTurn, failedTurns: s.FailedTurns, tokenCount: s.TokenCount,
		systemPrompt: s.SystemPrompt, tokenizer: s.Tokenizer,
		engagementSummary: s.EngagementSummary, historySummary: s.HistorySummary, reasoningSummary: s.ReasoningSummary,
		pendingClarification: s.PendingClarification,
	}
}

func (a buildSession) equal(b buildSession) bool {
	p, q := a.pendingClarification, b.pendingClarification
	return a.currentTurn == b.currentTurn && a.failedTurns == b.failedTurns && a.tokenCount == b.tokenCount &&
		a.systemPrompt == b.systemPrompt && a.tokenizer == b.tokenizer && a.engagementSummary == b.engagementSummary &&
		a.historySummary == b.historySummary && a.reasoningSummary == b.reasoningSummary &&
		len(p) == len(q) && (len(p) == 0 || reflect.DeepEqual(p, q))
}

// maxPatchRefs is the most refs a write may change for the builds after it
// to be patched: a small write. A larger one is not remembered (the build
// after it reads the rows), so that the writes remembered hold a bounded
// number of refs (writeLogSize × maxPatchRefs).
const maxPatchRefs = 100

// refsWrite is what one committed registry write changed, when that is
// known exactly: the refs it upserted, as stored (no
// artifacts: a write that stores an artifact is not remembered), which of
// them it inserted, and whether it added to a step's results.
type refsWrite struct {
	refs     []*registry.Entry
	inserted map[string]bool
	steps    bool
}

// refsWriteOf is the effect of a registry write that stored changed as
// stored (loaded holds the rows it read before), or nil when the effect is
// not known exactly.
func refsWriteOf(changed []*registry.Entry, stored Stored, l loaded, steps bool) *refsWrite {
	if len(stored) != len(changed) || len(changed) > maxPatchRefs {
		return nil
	}
	w := &refsWrite{refs: make([]*registry.Entry, 0, len(stored)), inserted: map[string]bool{}, steps: steps}
	for _, en := range changed {
		row := stored[en.Ref]
		if en.Artifact != nil || row == nil || row.Edges.Artifact != nil {
			return nil // an artifact written: its stored JSON is not what the write held
		}
		w.refs = append(w.refs, toEntry(row))
		if l.rows[en.Ref] == nil {
			w.inserted[en.Ref] = true
		}
	}
	return w
}

// patch makes a node's build at s from in, an earlier build's inputs, and
// writes, the registry writes committed since, in order; ok is false when
// the inputs at s are not known exactly from those.
func (bs *Builds) patch(ctx context.Context, s *ent.Session, node contextbuild.Node, o contextbuild.Options,
	counterName tokenizer.Name, in *buildInputs, writes []*refsWrite) (*ContextBuild, *buildInputs, bool, error) {
	if !in.session.equal(buildSessionOf(s)) {
		return nil, nil, false, nil
	}
	next := &buildInputs{snap: in.snap, session: in.session, complete: in.complete}
	for _, w := range writes {
		if w.steps && (node == contextbuild.Act || node == contextbuild.Reply) {
			return nil, nil, false, nil // the steps it shows changed
		}
		if node == contextbuild.Messages {
			continue // shows neither refs nor steps
		}
		var ok bool
		if next.snap.Entries, next.complete, ok = patchEntries(next.snap.Entries, next.complete, w, entriesSince(s, node, o)); !ok {
			return nil, nil, false, nil
		}
	}
	b, err := bs.make(ctx, s, node, o, counterName, counter(ctx, string(counterName)), next.snap)
	if err != nil {
		return nil, nil, false, err
	}
	return b, next, true, nil
}

// entriesSince is the oldest turn whose refs a node's build reads
// (readEntries' window). Understand reads them all, from turn 0: its
// registry table lists every registered ref, since it curates what stays
// in context and cannot keep what it does not see; the most recently
// referenced come first, so maxContextRefs and the budget cut the oldest.
func entriesSince(s *ent.Session, node contextbuild.Node, o contextbuild.Options) int {
	if node == contextbuild.Understand {
		return 0
	}
	return registry.ActiveSince(s.CurrentTurn, o.TurnsWindow)
}

// inEntries says whether a ref is one readEntries reads (liveRefs).
func inEntries(en *registry.Entry, since int) bool {
	return en.TurnLastReferenced >= since || en.EntityID == nil || en.ActiveReason != nil
}

// patchEntries applies w to the refs a build read (entries, in the read's
// order; complete when the read held every ref it selects), as a read
// after w would return them. It cannot (ok false) when the read was cut at
// maxContextRefs, or when w brings into the window a ref it did not insert
// (its artifact, if any, is not known). The entries are never changed in
// place: the earlier build's inputs stay as they were.
func patchEntries(entries []*registry.Entry, complete bool, w *refsWrite, since int) (_ []*registry.Entry, _ bool, ok bool) {
	if !complete {
		return nil, false, false
	}
	if len(w.refs) == 0 {
		return entries, true, true
	}
	changed := make(map[string]*registry.Entry, len(w.refs))
	for _, en := range w.refs {
		changed[en.Ref] = en
	}
	out := make([]*registry.Entry, 0, len(entries)+len(w.refs))
	for _, en := range entries {
		c, ok := changed[en.Ref]
		if !ok {
			out = append(out, en)
			continue
		}
		delete(changed, en.Ref)
		if !inEntries(c, since) {
			continue // out of the window now
		}
		patched := *c
		patched.Artifact = en.Artifact // the write stored no artifact
		out = append(out, &patched)
	}
	for _, ref := range slices.Sorted(maps.Keys(changed)) {
		c := changed[ref]
		if !inEntries(c, since) {
			continue
		}
		if !w.inserted[ref] {
			return nil, false, false // an older ref back in the window: its artifact is not known
		}
		out = append(out, c)
	}
	slices.SortFunc(out, entryOrder)
	if len(out) >= maxContextRefs {
		return out[:maxContextRefs], false, true
	}
	return out, true, true
}

// entryOrder is readEntries' ORDER BY: turn last referenced, newest
// first, then turn created, then the ref's bytes (COLLATE "C"). Refs are
// unique within a session, so the order is total.
func entryOrder(a, b *registry.Entry) int {
	if a.TurnLastReferenced != b.TurnLastReferenced {
		return b.TurnLastReferenced - a.TurnLastReferenced
	}
	if a.TurnCreated != b.TurnCreated {
		return a.TurnCreated - b.TurnCreated
	}
	return strings.Compare(a.Ref, b.Ref)
}
