package procstat

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// This process's CPU time grows while it spins, and the machine's busy
// time with it.
func TestCPUTimesGrowWhileThisProcessWorks(t *testing.T) {
	cpu0, err := ProcessCPU(os.Getpid())
	require.NoError(t, err)
	busy0, err := MachineBusy()
	require.NoError(t, err)
	for until := time.Now().Add(300 * time.Millisecond); time.Now().Before(until); {
	}
	cpu1, err := ProcessCPU(os.Getpid())
	require.NoError(t, err)
	busy1, err := MachineBusy()
	require.NoError(t, err)
	assert.Greater(t, cpu1, cpu0)
	assert.Greater(t, busy1, busy0)
	_, err = ProcessCPU(-1)
	assert.Error(t, err, "no such process")
}
