package engine

import (
	"context"

	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/ent/schema/schematype"
	"sessiongraph/ent/turn"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/store"
)

// RecordExchangeInput is a whole chat exchange: the user's message and the
// assistant's answer, for a client that has nothing to record between them
// (a conversation session: MESSAGES builds, no registry).
type RecordExchangeInput struct {
	SessionID        uuid.UUID
	UserMessage      string
	AssistantMessage string
	Summary          *schematype.ExecutionSummary
}

// RecordExchange records an exchange as the session's next turn, begun and
// ended in one commit: the rules of BeginTurn then EndTurn (no turn may be
// open; the turn two before has its reasoning compressed; promoted
// artifacts are cleared; both messages' tokens are counted once) and their
// two events, turn.began then turn.ended, with one round trip and one
// durable commit instead of two of each.
func (ts *Turns) RecordExchange(ctx context.Context, in RecordExchangeInput) (*ent.Turn, error) {
	if len(in.UserMessage) > MaxTextBytes {
		return nil, apperr.TooLarge("userMessage", "the message is %d bytes; at most %d are allowed", len(in.UserMessage), MaxTextBytes)
	}
	if len(in.AssistantMessage) > MaxTextBytes {
		return nil, apperr.TooLarge("assistantMessage", "the message is %d bytes; at most %d are allowed", len(in.AssistantMessage), MaxTextBytes)
	}
	w, err := ts.store.Begin(ctx, in.SessionID)
	if err != nil {
		return nil, err
	}
	defer w.Rollback()
	number := w.Session.CurrentTurn + 1
	// The read clears the turn state too: an open turn refuses the
	// exchange, which rolls the clearing back.
	open, older, cleared, err := readTurns(ctx, w, number-fullReasoningSummaries, true)
	if err != nil {
		return nil, err
	}
	if open != nil {
		return nil, apperr.New(apperr.TurnInProgress, "turn %d is still open: end it (%s) or fail it (%s) before recording an exchange", open.Number, apperr.OpEndTurn, apperr.OpFailTurn)
	}
	tokens, err := countTokens(ctx, w.Session.Tokenizer, in.UserMessage)
	if err != nil {
		return nil, err
	}
	w.Update().SetCurrentTurn(number).AddTokenCount(tokens)
	began := store.Event{Kind: KindTurnBegan, Payload: map[string]any{"turn": number}}
	done := &ent.Turn{SessionID: in.SessionID, Number: number, UserMessage: in.UserMessage, UserTokens: tokens,
		Status: turn.StatusOpen, StartedAt: w.Now}
	ended, err := ts.completeTurn(ctx, w, done, in.AssistantMessage, in.Summary, cleared)
	if err != nil {
		return nil, err
	}
	summary, err := asStored(done.ExecutionSummary)
	if err != nil {
		return nil, err
	}
	out, err := w.WithCommit.Turn.Create().SetSessionID(in.SessionID).SetNumber(number).
		SetUserMessage(in.UserMessage).SetUserTokens(tokens).SetStartedAt(w.Now).
		SetStatus(done.Status).SetAssistantMessage(done.AssistantMessage).SetAssistantTokens(done.AssistantTokens).
		SetAssistantSummary(done.AssistantSummary).SetNillableCompletedAt(done.CompletedAt).
		SetExecutionSummary(summary).Save(ctx) // sent with the commit
	if err != nil {
		return nil, err
	}
	compressReasoning(w, older)
	// Both writes' events, in order, in the one commit.
	if _, err := w.Commit(ctx, store.Mutation{Events: []store.Event{began, ended}}); err != nil {
		return nil, err
	}
	return ts.client.Turn.Adopt(out), nil // committed: later edge reads go through the client
}
