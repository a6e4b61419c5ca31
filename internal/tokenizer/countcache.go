package tokenizer

import "sync"

// A context build counts each of its sections whole, and the sections of a
// session change little from one build to the next (THINK, ACT and REPLY of
// one turn share most of theirs), so whole texts are worth remembering:
// counting a section scans every byte and looks up every piece.
const (
	// minCachedText is the shortest text whose count is kept: shorter ones
	// cost about what a lookup does.
	minCachedText = 64
	// maxCachedText is the longest: a long text is rarely asked for again
	// whole, and would crowd the others out.
	maxCachedText = 64 << 10
	// maxCachedBytes bounds the texts kept; past it the cache starts over.
	maxCachedBytes = 8 << 20
)

// countCache remembers the token counts of recently counted texts. Safe for
// concurrent use.
type countCache struct {
	mu     sync.Mutex
	counts map[string]int
	bytes  int
}

func cacheable(text string) bool {
	return len(text) >= minCachedText && len(text) <= maxCachedText
}

func (c *countCache) get(text string) (int, bool) {
	c.mu.Lock()
	n, ok := c.counts[text]
	c.mu.Unlock()
	return n, ok
}

func (c *countCache) put(text string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil || c.bytes+len(text) > maxCachedBytes {
		c.counts, c.bytes = make(map[string]int), 0
	}
	if _, ok := c.counts[text]; !ok {
		c.counts[text] = n
		c.bytes += len(text)
	}
}
