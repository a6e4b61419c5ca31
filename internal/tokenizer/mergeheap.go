package tokenizer

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
	h := make(pairHeap, 0, n)
	// push ranks the pair of tokens starting at boundary i, if there is one.
	push := func(i int32) {
		version[i]++
		j := next[i]
		if int(j) >= n {
			return
		}
		if r, ok := ranks[piece[i:next[j]]]; ok {
			h.push(pair{rank: r, at: i, version: version[i]})
		}
	}
	for i := range int32(n - 1) {
		push(i)
	}
	tokens := n
	for len(h) > 0 {
		p := h.pop()
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

// pairHeap is a binary min-heap of pairs by rank, then position: typed,
// so that pushing and popping box nothing (container/heap's interface
// made the merge as slow as the quadratic one for 500-byte pieces).
type pairHeap []pair

func (p pair) before(q pair) bool {
	return p.rank < q.rank || p.rank == q.rank && p.at < q.at
}

func (h *pairHeap) push(p pair) {
	*h = append(*h, p)
	s := *h
	for i := len(s) - 1; i > 0; {
		parent := (i - 1) / 2
		if !s[i].before(s[parent]) {
			break
		}
		s[i], s[parent] = s[parent], s[i]
		i = parent
	}
}

func (h *pairHeap) pop() pair {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		least, l, r := i, 2*i+1, 2*i+2
		if l < len(s) && s[l].before(s[least]) {
			least = l
		}
		if r < len(s) && s[r].before(s[least]) {
			least = r
		}
		if least == i {
			break
		}
		s[i], s[least] = s[least], s[i]
		i = least
	}
	*h = s
	return top
}
