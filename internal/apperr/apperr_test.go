package apperr_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"sessiongraph/internal/apperr"
)

// A message quotes the start of a long input, not all of it: the input may
// be a megabyte.
func TestMessagesQuoteTheStartOfLongInput(t *testing.T) {
	long := strings.Repeat("é", 1000)
	e := apperr.New(apperr.BadUserInput, "unknown tokenizer %q: use one of %s", long, "cl100k_base, chars4")
	assert.Less(t, len(e.Message), 200)
	assert.True(t, strings.HasPrefix(e.Message, `unknown tokenizer "éé`))
	assert.True(t, strings.HasSuffix(e.Message, `…": use one of cl100k_base, chars4`), e.Message)
	assert.True(t, utf8.ValidString(e.Message))
	assert.Equal(t, `short "x"`, apperr.Invalid("f", "short %q", "x").Message)

	// What the server lists itself (%s) stays whole; %% and a missing
	// argument do not shift or break anything.
	list := strings.Repeat("kind.a, ", 40)
	e = apperr.New(apperr.BadUserInput, "100%% sure: %q is not one of %s", long, list)
	assert.True(t, strings.HasSuffix(e.Message, "…\" is not one of "+list), e.Message)
	assert.NotPanics(t, func() { _ = apperr.New(apperr.BadUserInput, "%q and %q", long) })
}

// A message names an operation as GraphQL does; a door with its own names
// for operations (MCP's tools) shows its own, and every other argument as
// it was, quotes cut the same.
func TestAMessageNamesOperationsInEachDoorsWords(t *testing.T) {
	long := strings.Repeat("x", 200)
	e := apperr.New(apperr.TurnInProgress, "turn %d of %q is open: end it (%s) or fail it (%s)", 3, long, apperr.OpEndTurn, apperr.OpFailTurn)
	cut := `"` + strings.Repeat("x", 120) + `…"`
	assert.Equal(t, "turn 3 of "+cut+" is open: end it (endTurn) or fail it (failTurn)", e.Message)
	tool := map[apperr.Operation]string{apperr.OpEndTurn: "end_turn", apperr.OpFailTurn: "fail_turn"}
	assert.Equal(t, "turn 3 of "+cut+" is open: end it (end_turn) or fail it (fail_turn)",
		e.MessageNaming(func(op apperr.Operation) string { return tool[op] }))
	assert.Equal(t, e.Message, e.MessageNaming(nil))
	assert.Equal(t, "short", apperr.New(apperr.Internal, "short").MessageNaming(func(apperr.Operation) string { return "?" }))
}
