package engine

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/ent/stepresult"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/registry"
	"sessiongraph/internal/store"
)

// maxClosingWrites bounds the writes one endTurn carries; each is bounded
// as the call that does it alone is.
const maxClosingWrites = 50

// ClosingWrite is one write an agent runtime sends with the end of a turn
// instead of as a call of its own: the records of the turn's last steps,
// and the steps' results. Exactly one field is set; its sessionID is the
// turn's.
type ClosingWrite struct {
	Read       *RecordReadInput
	Updated    *RecordReadInput
	Created    *RecordCreatedInput
	Deleted    *RecordDeletedInput
	Generated  *RecordGeneratedInput
	StepResult *RecordStepResultInput
}

// ClosingResult is what a closing write answers, as its own call would:
// the records translated for the LLM (read, updated) and the refs it
// registered or touched.
type ClosingResult struct {
	Records []map[string]any
	// RecordsJSON is Records as RecordsResult's RecordsJSON: the answer's bytes.
	RecordsJSON []json.RawMessage
	Refs        []string
}

// ClosedTurn is the turn EndTurn closed and the results of its closing
// writes, in their order.
type ClosedTurn struct {
	Turn    *ent.Turn
	Closing []*ClosingResult
}

// CloseTurn is EndTurn with the turn's closing writes: they are applied
// first, in order, each by the rules of the call that does it alone and
// with its event, then the turn ends, all in one commit. What an agent
// runtime writes after its reply is built (the last step's records, the
// step results) then costs one request and one durable commit with the end
// of the turn instead of one each; any one refused refuses them all.
func (ts *Turns) CloseTurn(ctx context.Context, in EndTurnInput) (*ClosedTurn, error) {
	if len(in.AssistantMessage) > MaxTextBytes {
		return nil, apperr.TooLarge("assistantMessage", "the message is %d bytes; at most %d are allowed", len(in.AssistantMessage), MaxTextBytes)
	}
	if len(in.Closing) > maxClosingWrites {
		return nil, apperr.TooLarge("closing", "%d closing writes; at most %d are allowed", len(in.Closing), maxClosingWrites)
	}
	for i, c := range in.Closing {
		if c.count() != 1 {
			return nil, apperr.Invalid(fmt.Sprintf("closing[%d]", i), "a closing write names exactly one of read, updated, created, deleted, generated, stepResult")
		}
	}
	end := closesClearing
	if len(in.Closing) > 0 { // the turn's state is cleared after them: they may promote
		end = closes
	}
	closed, err := ts.closeWith(ctx, in, end)
	if err != nil {
		// A closing write's refs upsert answers with the statement after it.
		return nil, conflictError(err)
	}
	return closed, nil
}

// closeWith ends the open turn after the closing writes, each run within
// the turn end's write.
func (ts *Turns) closeWith(ctx context.Context, in EndTurnInput, end turnEnd) (*ClosedTurn, error) {
	tw, err := beginOpenTurn(ctx, ts.store, in.SessionID, end)
	if err != nil {
		return nil, err
	}
	defer tw.Rollback()
	out := &ClosedTurn{Closing: []*ClosingResult{}}
	within := &sharedWrite{Tx: tw.Tx}
	for _, c := range in.Closing {
		r, err := ts.applyClosing(ctx, within, in.SessionID, c)
		if err != nil {
			return nil, err
		}
		if r.Refs == nil {
			r.Refs = []string{}
		}
		out.Closing = append(out.Closing, r)
	}
	if err := tw.Flush(ctx); err != nil { // what they wrote, before the end reads
		return nil, err
	}
	ended, err := ts.completeTurn(ctx, tw.Tx, tw.done, in.AssistantMessage, in.Summary, tw.cleared)
	if err != nil {
		return nil, err
	}
	if out.Turn, err = ts.commitOpenTurn(ctx, tw, store.Mutation{Events: append(within.Events, ended)}); err != nil {
		return nil, err
	}
	return out, nil
}

func (c ClosingWrite) count() int {
	n := 0
	for _, set := range []bool{c.Read != nil, c.Updated != nil, c.Created != nil, c.Deleted != nil, c.Generated != nil, c.StepResult != nil} {
		if set {
			n++
		}
	}
	return n
}

// applyClosing runs one closing write through the code of the call that
// does it alone, within the turn end's write.
func (ts *Turns) applyClosing(ctx context.Context, within *sharedWrite, sessionID uuid.UUID, c ClosingWrite) (*ClosingResult, error) {
	switch {
	case c.Read != nil:
		c.Read.SessionID = sessionID
		return recordsOf(ts.writes.recordRecords(ctx, within, *c.Read, registry.ActionRead, KindRefsRead, stepresult.KindRead))
	case c.Updated != nil:
		c.Updated.SessionID = sessionID
		return recordsOf(ts.writes.recordRecords(ctx, within, *c.Updated, registry.ActionUpdated, KindRefsUpdated, stepresult.KindWrite))
	case c.Created != nil:
		c.Created.SessionID = sessionID
		return oneRef(ts.writes.recordCreated(ctx, within, *c.Created))
	case c.Deleted != nil:
		c.Deleted.SessionID = sessionID
		r, err := ts.writes.recordDeleted(ctx, within, *c.Deleted)
		if err != nil {
			return nil, err
		}
		return &ClosingResult{Refs: r.Refs}, nil
	case c.Generated != nil:
		c.Generated.SessionID = sessionID
		return oneRef(ts.writes.recordGenerated(ctx, within, *c.Generated))
	default:
		c.StepResult.SessionID = sessionID
		r, err := ts.writes.recordStepResult(ctx, within, *c.StepResult)
		if err != nil {
			return nil, err
		}
		return &ClosingResult{Refs: r.Refs}, nil
	}
}

func recordsOf(r *RecordsResult, err error) (*ClosingResult, error) {
	if err != nil {
		return nil, err
	}
	return &ClosingResult{Records: r.Records, RecordsJSON: r.RecordsJSON, Refs: r.Refs}, nil
}

func oneRef(r *RefResult, err error) (*ClosingResult, error) {
	if err != nil {
		return nil, err
	}
	return &ClosingResult{Refs: []string{r.Ref}}, nil
}
