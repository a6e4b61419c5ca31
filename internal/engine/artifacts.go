package engine

// This file holds the end of generated content's life: an explicit clear,
// and the archive it is read back from afterwards.

import (
	"context"

	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/ent/artifact"
	"sessiongraph/ent/predicate"
	"sessiongraph/ent/ref"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/store"
)

// ClearArtifact clears one pending or promoted artifact before its turn
// ends (once its linked records are saved, or to discard it); other
// artifacts are untouched. The content stays readable by its ref
// (ArchivedContent).
func (wr *Writes) ClearArtifact(ctx context.Context, sessionID uuid.UUID, name string) (*RefResult, error) {
	rw, err := wr.beginRegistry(ctx, nil, sessionID, selection{refs: []string{name}, artifacts: true})
	if err != nil {
		return nil, err
	}
	defer rw.Rollback()
	var status string
	if en, ok := rw.reg.Entry(name); ok && en.Artifact != nil {
		status = en.Artifact.Status
	}
	if _, err := rw.reg.ClearArtifact(name); err != nil {
		return nil, err
	}
	ev := store.Event{Kind: KindArtifactCleared, Payload: map[string]any{"ref": name, "was": status, "changes": changes(rw.reg.Changed())}}
	stored, err := wr.commitRegistry(ctx, rw, ev, nil)
	if err != nil {
		return nil, err
	}
	return &RefResult{SessionID: sessionID, Ref: name, Stored: stored}, nil
}

// ArchivedContent returns the generated content a ref was given, whatever
// became of it: pending, promoted, or cleared at the end of its turn or
// explicitly (the content archive). It is nil for a ref that never
// had generated content, and REF_NOT_FOUND for a ref the session lacks.
func (rd *Reads) ArchivedContent(ctx context.Context, sessionID uuid.UUID, name string) (*ent.Artifact, error) {
	row, err := rd.client.Ref.Query().Where(ref.SessionID(sessionID), ref.Ref(name)).WithArtifact(inSession(sessionID)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apperr.UnknownRef("ref", name)
	}
	if err != nil {
		return nil, err
	}
	return row.Edges.Artifact, nil
}

// PendingArtifacts selects a session's artifacts not saved yet (the truly
// pending ones).
func PendingArtifacts() predicate.Artifact {
	return artifact.StatusEQ(artifact.StatusPending)
}

// JustSavedArtifacts selects a session's artifacts saved in its current
// turn: promoted, their content kept for linked records until the turn ends.
func JustSavedArtifacts(s *ent.Session) predicate.Artifact {
	return artifact.And(artifact.StatusEQ(artifact.StatusPromoted), artifact.PromotedTurn(s.CurrentTurn))
}
