package graph_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/engine"
)

// A turn's receipts are bounded: the same build recorded again answers
// the receipt it already has (300 identical calls stored 300), and past
// MaxReceiptsPerTurn a new one is refused until the turn ends.
func TestReceiptsPerTurnAreBounded(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "receipt-bounds")
	a.turn("find Indian recipes")
	first := a.recordContext("THINK")
	for range 30 {
		again := a.recordContext("THINK")
		require.Equal(t, first.Receipt.ID, again.Receipt.ID, "an identical build answers the receipt already kept")
	}
	require.Len(t, receiptsOf(t, s, a.id).Session.ContextReceipts.Edges, 1)

	// Each read changes the build, so each recording is new, up to the cap.
	for i := 1; i < engine.MaxReceiptsPerTurn; i++ {
		a.read("recipes", map[string]any{"id": newUUID(), "name": "Dal"})
		a.recordContext("THINK")
	}
	a.read("recipes", map[string]any{"id": newUUID(), "name": "Kheer"})
	assert.Equal(t, "INPUT_TOO_LARGE", a.code(recordContext, map[string]any{"node": "THINK"}))
	a.turn("and a dessert")
	a.recordContext("THINK") // a new turn has room again
}
