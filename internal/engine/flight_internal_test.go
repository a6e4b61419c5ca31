package engine

import (
	"errors"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Callers asking for the same build at once share one making of it: the
// first makes it, the others wait for it and get what it made; the next
// caller after it, a flight of its own.
func TestCallersOfTheSameBuildShareOneFlight(t *testing.T) {
	c := newBuildCache()
	k := buildKey{session: uuid.New(), sequence: 3, node: "THINK"}
	first, making := c.joinFlight(k)
	require.True(t, making, "the first caller makes the build")
	var wg sync.WaitGroup
	got := make([]*ContextBuild, 4)
	for i := range got {
		f, making := c.joinFlight(k)
		require.False(t, making, "a caller while the build is made waits for it")
		require.Same(t, first, f)
		wg.Go(func() {
			<-f.done
			got[i] = f.build
		})
	}
	other, making := c.joinFlight(buildKey{session: k.session, sequence: 4, node: "THINK"})
	assert.True(t, making, "another build has a flight of its own")
	c.endFlight(buildKey{session: k.session, sequence: 4, node: "THINK"}, other, nil, errors.New("x"))

	made := &ContextBuild{Tokenizer: "cl100k_base"}
	c.endFlight(k, first, made, nil)
	wg.Wait()
	for _, b := range got {
		assert.Same(t, made, b)
	}
	_, making = c.joinFlight(k)
	assert.True(t, making, "once ended, the next caller makes the build again")
}

// A maker that stops without a build or an error (it panicked) leaves its
// flight's other callers an error, not a build of nil.
func TestAFlightWhoseMakerStoppedEndsInAnError(t *testing.T) {
	c := newBuildCache()
	k := buildKey{session: uuid.New(), sequence: 1, node: "ACT"}
	f, _ := c.joinFlight(k)
	c.endFlight(k, f, nil, nil)
	<-f.done
	assert.ErrorIs(t, f.err, errBuildFailed)
	assert.Nil(t, f.build)
}
