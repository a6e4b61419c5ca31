package tokenizer

import (
	"math"
	"strings"
	"sync"
)

// pieceTokens counts the tokens of one pre-token as tiktoken-go's CoreBPE
// encodes it: one if the piece is in the vocabulary or a single byte,
// otherwise as many as the byte-pair merge leaves.
func pieceTokens(piece string, ranks map[string]int, cache *mergeCache) int {
	if len(piece) == 1 {
		return 1
	}
	if _, ok := ranks[piece]; ok {
		return 1
	}
	if n, ok := cache.get(piece); ok {
		return n
	}
	var n int
	if len(piece) < longPiece {
		n = mergedLen(piece, ranks)
	} else {
		n = mergedLenHeap(piece, ranks)
	}
	cache.put(piece, n)
	return n
}

// part is one boundary of the merge: where a part starts, and the rank of
// the pair starting there (noRank when it is not in the vocabulary).
type part struct{ start, rank int }

const noRank = math.MaxInt

// mergedLen is tiktoken-go's bytePairMerge without building the tokens:
// repeatedly merge the leftmost pair of lowest rank until none is in the
// vocabulary. The order of merges is kept, as the count can depend on it.
func mergedLen(piece string, ranks map[string]int) int {
	var stack [64]part // most pieces are short, so the merge needs no heap
	parts := stack[:0]
	for i := range len(piece) + 1 {
		parts = append(parts, part{i, noRank})
	}
	for i := 0; i < len(parts)-2; i++ {
		parts[i].rank = pairRank(piece, parts, i, 0, ranks)
	}
	for len(parts) > 1 {
		best, at := noRank, -1
		for i := 0; i < len(parts)-1; i++ {
			if parts[i].rank < best {
				best, at = parts[i].rank, i
			}
		}
		if at < 0 {
			break
		}
		parts[at].rank = pairRank(piece, parts, at, 1, ranks)
		if at > 0 {
			parts[at-1].rank = pairRank(piece, parts, at-1, 1, ranks)
		}
		parts = append(parts[:at+1], parts[at+2:]...)
	}
	return len(parts) - 1
}

// pairRank is the rank of the bytes from parts[i] to parts[i+skip+2], as
// the pair would be after the merge at i+skip.
func pairRank(piece string, parts []part, i, skip int, ranks map[string]int) int {
	if i+skip+2 < len(parts) {
		if r, ok := ranks[piece[parts[i].start:parts[i+skip+2].start]]; ok {
			return r
		}
	}
	return noRank
}

// mergeCache remembers the counts of short pieces that needed a merge:
// identifiers, numbers in words and non-English words recur across turns.
// A piece's count never changes, so the cache only needs to stay bounded;
// it starts afresh when full rather than tracking recency.
type mergeCache struct {
	mu     sync.RWMutex
	counts map[string]int
}

const (
	maxCachedPiece  = 64      // bytes; longer pieces are rare and not worth keeping
	maxCachedPieces = 1 << 15 // about 3 MB at most
)

func (c *mergeCache) get(piece string) (int, bool) {
	if len(piece) > maxCachedPiece {
		return 0, false
	}
	c.mu.RLock()
	n, ok := c.counts[piece]
	c.mu.RUnlock()
	return n, ok
}

func (c *mergeCache) put(piece string, n int) {
	if len(piece) > maxCachedPiece {
		return
	}
	c.mu.Lock()
	if c.counts == nil || len(c.counts) >= maxCachedPieces {
		c.counts = make(map[string]int)
	}
	// A clone, so the cache does not pin the whole text the piece is cut from.
	c.counts[strings.Clone(piece)] = n
	c.mu.Unlock()
}
