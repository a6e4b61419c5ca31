package mcpserver

import (
	"context"

	"github.com/google/uuid"

	"sessiongraph/internal/contextbuild"
	"sessiongraph/internal/engine"
)

// RecordModelCallIn is the model call a recorded build fed.
type RecordModelCallIn struct {
	SessionID    string             `json:"sessionID"`
	Node         *contextbuild.Node `json:"node,omitempty" jsonschema:"the node whose newest build of the current turn (build_context records it) the call was fed; or give receiptID"`
	ReceiptID    *string            `json:"receiptID,omitempty" jsonschema:"the receipt of the build the call was fed (GraphQL's recordContext answers it); or give node"`
	Model        string             `json:"model" jsonschema:"the model called, as the provider names it"`
	InputTokens  int                `json:"inputTokens" jsonschema:"tokens the model read"`
	OutputTokens int                `json:"outputTokens" jsonschema:"tokens the model wrote"`
	LatencyMs    int                `json:"latencyMs" jsonschema:"how long the call took, in milliseconds"`
	Cost         float64            `json:"cost" jsonschema:"what the call cost, in US dollars"`
	FinishReason *string            `json:"finishReason,omitempty" jsonschema:"why the model stopped (stop, length, tool_calls, ...)"`
	Error        *string            `json:"error,omitempty" jsonschema:"what went wrong; omit when the call succeeded"`
}

// ModelCallOut is the call as recorded.
type ModelCallOut struct {
	ID           string  `json:"id"`
	ReceiptID    string  `json:"receiptID"`
	Turn         int     `json:"turn"`
	Node         string  `json:"node"`
	Model        string  `json:"model"`
	InputTokens  int     `json:"inputTokens"`
	OutputTokens int     `json:"outputTokens"`
	LatencyMs    int     `json:"latencyMs"`
	Cost         float64 `json:"cost"`
	FinishReason *string `json:"finishReason,omitempty"`
	Error        *string `json:"error,omitempty"`
}

func (t *tools) recordModelCall(ctx context.Context, in RecordModelCallIn) (*ModelCallOut, error) {
	session, err := parseID("sessionID", in.SessionID)
	if err != nil {
		return nil, err
	}
	var receipt *uuid.UUID
	if in.ReceiptID != nil {
		id, err := parseID("receiptID", *in.ReceiptID)
		if err != nil {
			return nil, err
		}
		receipt = &id
	}
	c, err := t.engine.Receipts.RecordModelCall(ctx, engine.RecordModelCallInput{ReceiptID: receipt, SessionID: &session, Node: in.Node,
		Model: in.Model, InputTokens: in.InputTokens, OutputTokens: in.OutputTokens, LatencyMs: in.LatencyMs, Cost: in.Cost,
		FinishReason: in.FinishReason, Error: in.Error})
	if err != nil {
		return nil, err
	}
	return &ModelCallOut{ID: c.ID.String(), ReceiptID: c.ReceiptID.String(), Turn: c.Turn, Node: string(c.Node), Model: c.Model,
		InputTokens: c.InputTokens, OutputTokens: c.OutputTokens, LatencyMs: c.LatencyMs, Cost: c.Cost,
		FinishReason: c.FinishReason, Error: c.Error}, nil
}
