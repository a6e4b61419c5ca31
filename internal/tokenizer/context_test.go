package tokenizer

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A counter bound to a live context counts as the counter does; once the
// context is done, it stops at once and answers what it had, so a request
// that ended spends no more CPU on its text.
func TestCountingStopsWhenTheRequestEnds(t *testing.T) {
	text := strings.Repeat("a", 1<<20)
	for _, name := range Known() {
		c, err := Get(name)
		require.NoError(t, err)
		live := WithContext(context.Background(), c)
		assert.Equal(t, c.Count(paragraph), live.Count(paragraph), name)
		_, additive := c.(interface{ AddsUpAcrossSections() bool })
		assert.Equal(t, additive, live.(ctxCounter).AddsUpAcrossSections(), name)

		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		assert.Zero(t, WithContext(ctx, c).Count(text), name)
	}
	b, err := Get(CL100K)
	require.NoError(t, err)
	done := make(chan struct{})
	close(done)
	assert.Zero(t, b.(bpeCounter).countUntil(text, done), "a closed channel stops before the first run")
}
