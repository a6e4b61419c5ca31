package access

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// claiming starts a Claim in the background once the claims before it are
// waiting, and returns where its give-back arrives.
func claiming(t *testing.T, s *PoolShares, ctx context.Context, p *Principal, write bool) <-chan func() {
	t.Helper()
	s.mu.Lock()
	before := len(s.waiting)
	s.mu.Unlock()
	got := make(chan func(), 1)
	go func() {
		release, err := s.Claim(ctx, p, write)
		if err == nil {
			got <- release
		} else {
			close(got)
		}
	}()
	require.Eventually(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.waiting) == before+1 || len(got) > 0
	}, 10*time.Second, time.Millisecond, "the claim is waiting or granted")
	return got
}

func TestClaimsOfOneKeyAreServedInTheOrderTheyCame(t *testing.T) {
	s := NewPoolShares(8, 13, 75) // one operation a key
	p := clientOf("acme")
	first, err := s.Claim(t.Context(), p, true)
	require.NoError(t, err)
	var queue []<-chan func()
	for range 5 {
		queue = append(queue, claiming(t, s, t.Context(), p, true))
	}
	release := first
	for i, c := range queue {
		release()
		next, ok := <-c
		require.True(t, ok, "claim %d is granted", i)
		for _, later := range queue[i+1:] {
			assert.Empty(t, later, "claim %d is not granted before claim %d", i+1, i)
		}
		release = next
	}
	release()
	s.mu.Lock()
	defer s.mu.Unlock()
	assert.Empty(t, s.byKey, "every claim was given back")
	assert.Empty(t, s.waiting)
}

func TestAWaitingKeyDoesNotHoldUpAnotherKey(t *testing.T) {
	s := NewPoolShares(8, 13, 75)
	busy, other := clientOf("acme"), clientOf("globex")
	held, err := s.Claim(t.Context(), busy, true)
	require.NoError(t, err)
	waiting := claiming(t, s, t.Context(), busy, true)
	release, err := s.Claim(t.Context(), other, true) // fits at once, behind the waiting one
	require.NoError(t, err)
	release()
	assert.Empty(t, waiting, "the busy key's second claim still waits for its first")
	held()
	(<-waiting)()
}

func TestAClaimThatStopsWaitingLeavesTheLine(t *testing.T) {
	s := NewPoolShares(8, 13, 75)
	p := clientOf("acme")
	held, err := s.Claim(t.Context(), p, true)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	gone := claiming(t, s, ctx, p, true)
	next := claiming(t, s, t.Context(), p, true)
	cancel()
	_, granted := <-gone
	assert.False(t, granted, "a claim whose context ended is not granted")
	held()
	(<-next)()
	s.mu.Lock()
	defer s.mu.Unlock()
	assert.Empty(t, s.byKey)
	assert.Empty(t, s.waiting)
}
