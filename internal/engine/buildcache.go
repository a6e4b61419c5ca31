package engine

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"
	lru "github.com/hashicorp/golang-lru/v2"

	"sessiongraph/internal/contextbuild"
	"sessiongraph/internal/registry"
)

// buildCacheSize is how many recent context builds a replica keeps; a
// build's text is bounded by its budget (25,000 tokens by default), so the
// cache holds tens of megabytes at most. Each one keeps the inputs it was
// made from (bounded by maxContextRefs refs and the turns and steps the
// node shows), so that the build after a small write can be patched.
const buildCacheSize = 128

// writeLogSize is how many of its own committed writes a replica remembers
// the effect of (a few refs each), for patching builds: enough for every
// cached build's session to be a few writes behind.
const writeLogSize = 4 * buildCacheSize

// maxPatchWrites is how many writes one build may be patched across; a
// build further behind is made from the rows.
const maxPatchWrites = 8

// buildKey names everything a context build is made from. A session's
// state is named by its event sequence: every committed change to the
// session, its turns, refs, artifacts and step results appends one event
// under the session's row lock and raises it (invariant 3). The domain is
// the cached domain value itself, which a reload replaces.
type buildKey struct {
	session  uuid.UUID
	sequence int64
	node     contextbuild.Node
	options  contextbuild.Options
	counter  string
	domain   *registry.Domain
}

// cachedBuild is a remembered build and the inputs it was made from; in
// is nil when the build cannot be patched.
type cachedBuild struct {
	build *ContextBuild
	in    *buildInputs
}

// writeKey names one committed write by the sequence it moved the session
// from: a session's sequence is raised by exactly one commit at a time, so
// the write from sequence N is the only change between N and N+1.
type writeKey struct {
	session uuid.UUID
	from    int64
}

// buildCache remembers recent builds, so that the same node built again
// from an unchanged session (a contextUpdated subscriber per client, a
// dashboard, a runtime retrying) costs the session's read and nothing
// more, and builds the same key at once only once. It also remembers what
// this replica's own registry writes changed, exactly (refs as their
// upserts returned them), so that the build after such a write is the
// build before it, patched, with no read of the session's rows.
type buildCache struct {
	recent *lru.Cache[buildKey, *cachedBuild]
	writes *lru.Cache[writeKey, *refsWrite]
	// flights are the builds being made, by key.
	mu      sync.Mutex
	flights map[buildKey]*flight
	// patched counts the builds made by patching, for the tests.
	patched atomic.Int64
}

func newBuildCache() *buildCache {
	recent, err := lru.New[buildKey, *cachedBuild](buildCacheSize)
	if err != nil {
		panic(err) // only for a size below 1
	}
	writes, err := lru.New[writeKey, *refsWrite](writeLogSize)
	if err != nil {
		panic(err)
	}
	return &buildCache{recent: recent, writes: writes, flights: map[buildKey]*flight{}}
}

// flight is one making of a build, which the callers asking for the same
// build at once share: done is closed once build or err is set.
type flight struct {
	done  chan struct{}
	build *ContextBuild
	err   error
}

// joinFlight returns the flight making k's build, and whether the caller is the
// one to make it (and then to end the flight).
func (c *buildCache) joinFlight(k buildKey) (*flight, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f, ok := c.flights[k]; ok {
		return f, false
	}
	f := &flight{done: make(chan struct{})}
	c.flights[k] = f
	return f, true
}

// errBuildFailed is what a flight's other callers get when its maker
// stopped without a build or an error (it panicked).
var errBuildFailed = errors.New("the context build failed")

// endFlight ends k's flight with what its maker made.
func (c *buildCache) endFlight(k buildKey, f *flight, b *ContextBuild, err error) {
	c.mu.Lock()
	delete(c.flights, k)
	c.mu.Unlock()
	if b == nil && err == nil {
		err = errBuildFailed
	}
	f.build, f.err = b, err
	close(f.done)
}

// wrote remembers that this replica's commit moved session from sequence
// from to from+1 by w, and nothing else.
func (c *buildCache) wrote(session uuid.UUID, from int64, w *refsWrite) {
	c.writes.Add(writeKey{session, from}, w)
}

// base finds the newest remembered build of k's node before k's sequence
// that the writes this replica remembers lead from to k's sequence, with
// those writes in the order they were committed.
func (c *buildCache) base(k buildKey) (*buildInputs, []*refsWrite) {
	var writes []*refsWrite
	prev := k
	for range maxPatchWrites {
		prev.sequence--
		if prev.sequence < 1 {
			return nil, nil
		}
		w, ok := c.writes.Peek(writeKey{k.session, prev.sequence})
		if !ok {
			return nil, nil // a write of another replica, or one that changed more than refs
		}
		writes = append(writes, w)
		if b, ok := c.recent.Peek(prev); ok && b.in != nil {
			for i, j := 0, len(writes)-1; i < j; i, j = i+1, j-1 {
				writes[i], writes[j] = writes[j], writes[i]
			}
			return b.in, writes
		}
	}
	return nil, nil
}
