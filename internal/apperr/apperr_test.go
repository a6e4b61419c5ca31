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
