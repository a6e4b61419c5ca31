package engine

import (
	"context"

	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/ent/artifact"
	"sessiongraph/ent/schema/schematype"
	"sessiongraph/ent/turn"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/store"
)

// Event kinds of turns.
const (
	KindTurnBegan  = "turn.began"
	KindTurnEnded  = "turn.ended"
	KindTurnFailed = "turn.failed"
)

// BeginTurn opens the session's next turn with the user's message.
func (e *Engine) BeginTurn(ctx context.Context, sessionID uuid.UUID, userMessage string) (*ent.Turn, error) {
	var out *ent.Turn
	err := e.store.Write(ctx, sessionID, func(ctx context.Context, w *store.Work) (store.Event, error) {
		if open, err := openTurn(ctx, w); err != nil || open != nil {
			if err == nil {
				err = apperr.New(apperr.TurnInProgress, "turn %d is still open: end it (endTurn) or fail it (failTurn) before beginning another", open.Number)
			}
			return store.Event{}, err
		}
		number := w.Session.CurrentTurn + 1
		t, err := w.Tx.Turn.Create().SetSessionID(sessionID).SetNumber(number).
			SetUserMessage(userMessage).SetStartedAt(w.Now).Save(ctx)
		if err != nil {
			return store.Event{}, err
		}
		out = t
		w.Update().SetCurrentTurn(number)
		return store.Event{Kind: KindTurnBegan, Payload: map[string]any{"turn": number}}, nil
	})
	return out, err
}

// EndTurnInput completes the open turn.
type EndTurnInput struct {
	SessionID        uuid.UUID
	AssistantMessage string
	Summary          *schematype.ExecutionSummary
}

// EndTurn completes the open turn and clears the artifacts promoted in it:
// their content was kept only for the records linked to them (seed 000's
// clear_turn_promoted_artifacts).
func (e *Engine) EndTurn(ctx context.Context, in EndTurnInput) (*ent.Turn, error) {
	return e.closeTurn(ctx, in.SessionID, func(ctx context.Context, w *store.Work, t *ent.Turn) (*ent.Turn, store.Event, error) {
		cleared, err := w.Tx.Artifact.Update().
			Where(artifact.SessionID(in.SessionID), artifact.StatusEQ(artifact.StatusPromoted)).
			SetStatus(artifact.StatusCleared).Save(ctx)
		if err != nil {
			return nil, store.Event{}, err
		}
		u := w.Tx.Turn.UpdateOne(t).SetStatus(turn.StatusCompleted).SetCompletedAt(w.Now).
			SetAssistantMessage(in.AssistantMessage)
		if in.Summary != nil {
			u.SetExecutionSummary(in.Summary)
		}
		done, err := u.Save(ctx)
		return done, store.Event{Kind: KindTurnEnded, Payload: map[string]any{"turn": t.Number, "clearedArtifacts": cleared}}, err
	})
}

// FailTurn closes the open turn as failed, with the reason.
func (e *Engine) FailTurn(ctx context.Context, sessionID uuid.UUID, reason string) (*ent.Turn, error) {
	return e.closeTurn(ctx, sessionID, func(ctx context.Context, w *store.Work, t *ent.Turn) (*ent.Turn, store.Event, error) {
		summary := t.ExecutionSummary
		if summary == nil {
			summary = &schematype.ExecutionSummary{}
		}
		summary.BlockedReason = &reason
		done, err := w.Tx.Turn.UpdateOne(t).SetStatus(turn.StatusFailed).SetCompletedAt(w.Now).
			SetExecutionSummary(summary).Save(ctx)
		return done, store.Event{Kind: KindTurnFailed, Payload: map[string]any{"turn": t.Number, "reason": reason}}, err
	})
}

type turnCloser func(ctx context.Context, w *store.Work, open *ent.Turn) (*ent.Turn, store.Event, error)

func (e *Engine) closeTurn(ctx context.Context, sessionID uuid.UUID, close turnCloser) (*ent.Turn, error) {
	var out *ent.Turn
	err := e.store.Write(ctx, sessionID, func(ctx context.Context, w *store.Work) (store.Event, error) {
		open, err := openTurn(ctx, w)
		if err != nil {
			return store.Event{}, err
		}
		if open == nil {
			return store.Event{}, apperr.New(apperr.NoOpenTurn, "session %s has no open turn: begin one first (beginTurn)", sessionID)
		}
		var ev store.Event
		out, ev, err = close(ctx, w, open)
		return ev, err
	})
	return out, err
}

// openTurn returns the session's current turn when it is still open.
func openTurn(ctx context.Context, w *store.Work) (*ent.Turn, error) {
	if w.Session.CurrentTurn == 0 {
		return nil, nil
	}
	t, err := w.Tx.Turn.Query().Where(turn.SessionID(w.Session.ID), turn.Number(w.Session.CurrentTurn)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil || t.Status != turn.StatusOpen {
		return nil, err
	}
	return t, nil
}
