package events

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A feed cursor is read only in the spelling Position.String writes, and
// a refusal quotes at most its start.
func TestPositionsAreReadInTheirOneSpelling(t *testing.T) {
	p := Position{Xid: 42, SessionID: uuid.MustParse("0190a5b4-0000-7000-8000-00000000000a"), Sequence: 7}
	got, err := ParsePosition(p.String())
	require.NoError(t, err)
	assert.Equal(t, p, got)
	for _, s := range []string{
		"+42.0190a5b4-0000-7000-8000-00000000000a.7",
		"042.0190a5b4-0000-7000-8000-00000000000a.7",
		"42.0190A5B4-0000-7000-8000-00000000000A.7",
		"42.{0190a5b4-0000-7000-8000-00000000000a}.7",
		"42.0190a5b4000070008000000000000000a.7",
		"42.0190a5b4-0000-7000-8000-00000000000a.07",
		"42.0190a5b4-0000-7000-8000-00000000000a.7 ",
	} {
		_, err := ParsePosition(s)
		assert.Error(t, err, s)
	}
	_, err = ParsePosition(strings.Repeat("9", 1<<20))
	require.Error(t, err)
	assert.Less(t, len(err.Error()), 200)
}
