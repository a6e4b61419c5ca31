package store

import (
	"context"

	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/internal/apperr"
)

// joinedKey carries a write's Work in a context (Join).
type joinedKey struct{}

// Join returns ctx carrying w, so that a Write of w's session made with it
// runs inside w's transaction instead of a commit of its own: the change
// sees everything w's earlier changes did, its event is recorded before
// w's own (RecordFirst), and an error from it rolls back the whole write.
// A write that carries several operations (a turn's closing writes) runs
// each as the call that does it alone would, with the same rules and events.
func Join(ctx context.Context, w *Work) context.Context {
	return context.WithValue(ctx, joinedKey{}, w)
}

// joined runs change inside the joined Work of ctx, if any, and reports
// whether it did.
func joined(ctx context.Context, sessionID uuid.UUID, change Change, readBack bool) (bool, *ent.Session, error) {
	w, ok := ctx.Value(joinedKey{}).(*Work)
	if !ok {
		return false, nil, nil
	}
	if w.Session.ID != sessionID || readBack {
		return true, nil, apperr.New(apperr.Internal, "a joined write must be a Write of the joined session")
	}
	ev, err := change(ctx, w)
	if err != nil {
		return true, nil, err
	}
	w.RecordFirst(ev)
	return true, nil, nil
}
