package store

import (
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEventOrderLockMatchesTheTrigger: the commit-time trigger that numbers
// events spells the lock key out; it must be this one.
func TestEventOrderLockMatchesTheTrigger(t *testing.T) {
	sql, err := os.ReadFile("../../migrations/20261121130000_event_sequence_at_commit.up.sql")
	require.NoError(t, err)
	assert.Contains(t, string(sql), fmt.Sprintf("pg_advisory_xact_lock(%d)", eventOrderLock))
}
