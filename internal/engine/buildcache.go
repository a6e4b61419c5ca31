package engine

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"sync/atomic"

	"github.com/google/uuid"
	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"

	"sessiongraph/ent"
	"sessiongraph/internal/contextbuild"
	"sessiongraph/internal/registry"
	"sessiongraph/internal/tokenizer"
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

// flightKey names k in the flight of builds being made: every field,
// appended (fmt's %+v of the options, by reflection, was a tenth of a
// patched build's CPU). TestTheFlightKeyNamesEveryField holds it to
// buildKey's and Options' fields.
func (k buildKey) flightKey() string {
	o := k.options
	b := make([]byte, 0, 128)
	b = append(b, k.session[:]...)
	for _, n := range []int64{k.sequence, int64(o.TurnsWindow), int64(o.Budget), int64(o.ModelLimit), int64(o.KeepRecent)} {
		b = strconv.AppendInt(append(b, 0), n, 10)
	}
	for _, s := range []string{string(k.node), string(o.Strategy), k.counter} {
		b = append(append(b, 0), s...)
	}
	// The domain by identity, as the remembered builds key it.
	b = strconv.AppendUint(append(b, 0), uint64(reflect.ValueOf(k.domain).Pointer()), 16)
	return string(b)
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
	flight singleflight.Group
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
	return &buildCache{recent: recent, writes: writes}
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

// remembered returns the build k names for session s: from the cache,
// patched from an earlier one, or made from the rows with ctx. Callers
// asking for the same key at once share one build; when the one that made
// it left (its context ended), a caller still waiting builds for itself. A
// build that fails is not kept.
func (bs *Builds) remembered(ctx context.Context, k buildKey, s *ent.Session) (*ContextBuild, error) {
	c := bs.cache
	if b, ok := c.recent.Get(k); ok {
		return b.build, nil
	}
	counterName := tokenizer.Name(k.counter)
	// made is the flight's function itself, called as is: a build's
	// statements stay a few calls deep.
	made := func() (any, error) {
		if in, writes := c.base(k); in != nil {
			b, next, ok, err := bs.patch(ctx, s, k.node, k.options, counterName, in, writes)
			if err != nil {
				return nil, err
			}
			if ok {
				c.patched.Add(1)
				c.recent.Add(k, &cachedBuild{build: b, in: next})
				return b, nil
			}
		}
		b, in, err := bs.buildFromRows(ctx, s, k.node, k.options, counterName, k.domain)
		if err != nil {
			return nil, err
		}
		c.recent.Add(k, &cachedBuild{build: b, in: in})
		return b, nil
	}
	v, err, _ := c.flight.Do(k.flightKey(), made)
	if err != nil && ctx.Err() == nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		v, err = made() // the caller that made it left; this one's ctx is still live
	}
	if err != nil {
		return nil, err
	}
	return v.(*ContextBuild), nil
}
