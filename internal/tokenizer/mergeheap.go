package tokenizer

import "container/heap"

// longPiece is the length from which a piece is merged with a heap: the
// plain merge rescans every pair after each merge, quadratic in the piece,
// which a long run without spaces (a base64 blob, a line of one letter)
// made cost seconds per megabyte inside a write.
const longPiece = 64

// mergedLenHeap is mergedLen in O(n log n): the pairs wait in a heap by
// rank and then position, so the leftmost pair of lowest rank is always on
// top, and a merge only re-ranks the pairs on either side of it. Entries
// whose pair has changed since they were pushed are skipped when popped.
func mergedLenHeap(piece string, ranks map[string]int) int {
	n := len(piece)
	// Boundaries 0..n: a token runs from a live boundary to the next one.
	next := make([]int32, n+1)
	prev := make([]int32, n+1)
	version := make([]int32, n+1)
	for i := range n + 1 {
		next[i], prev[i] = int32(i+1), int32(i-1)
	}
	h := &pairHeap{}
	// push ranks the pair of tokens starting at boundary i, if there is one.
	push := func(i int32) {
		version[i]++
		j := next[i]
		if int(j) >= n {
			return
		}
		if r, ok := ranks[piece[i:next[j]]]; ok {
			heap.Push(h, pair{rank: r, at: i, version: version[i]})
		}
	}
	for i := range int32(n - 1) {
		push(i)
	}
	tokens := n
	for h.Len() > 0 {
		p := heap.Pop(h).(pair)
		if p.version != version[p.at] {
			continue // the pair changed after this entry was pushed
		}
		j := next[p.at] // the boundary the merge removes
		next[p.at] = next[j]
		if int(next[j]) <= n {
			prev[next[j]] = p.at
		}
		version[j]++
		tokens--
		push(p.at)
		if prev[p.at] >= 0 {
			push(prev[p.at])
		}
	}
	return tokens
}

// pair is a heap entry: the rank of the pair of tokens starting at a
// boundary, as it was when pushed.
type pair struct {
	rank        int
	at, version int32
}

type pairHeap []pair

func (h pairHeap) Len() int { return len(h) }
func (h pairHeap) Less(a, b int) bool {
	if h[a].rank != h[b].rank {
		return h[a].rank < h[b].rank
	}
	return h[a].at < h[b].at
}
func (h pairHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *pairHeap) Push(x any)   { *h = append(*h, x.(pair)) }
func (h *pairHeap) Pop() any {
	old := *h
	p := old[len(old)-1]
	*h = old[:len(old)-1]
	return p
}
