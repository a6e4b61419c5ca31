package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/sync/singleflight"

	"sessiongraph/internal/contextbuild"
	"sessiongraph/internal/registry"
)

// buildCacheSize is how many recent context builds a replica keeps; a
// build's text is bounded by its budget (25,000 tokens by default), so the
// cache holds tens of megabytes at most.
const buildCacheSize = 128

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

// buildCache remembers recent builds, so that the same node built again
// from an unchanged session (a contextUpdated subscriber per client, a
// dashboard, a runtime retrying) costs the session's read and nothing
// more, and builds the same key at once only once.
type buildCache struct {
	recent *lru.Cache[buildKey, *ContextBuild]
	flight singleflight.Group
}

func newBuildCache() *buildCache {
	recent, err := lru.New[buildKey, *ContextBuild](buildCacheSize)
	if err != nil {
		panic(err) // only for a size below 1
	}
	return &buildCache{recent: recent}
}

// get returns the build of k, from the cache or made by build with ctx.
// Callers asking for the same key at once share one build; when the one
// that made it left (its context ended), a caller still waiting builds
// for itself. A build that fails is not kept.
func (c *buildCache) get(ctx context.Context, k buildKey, build func(context.Context) (*ContextBuild, error)) (*ContextBuild, error) {
	if b, ok := c.recent.Get(k); ok {
		return b, nil
	}
	v, err, _ := c.flight.Do(fmt.Sprintf("%s/%d/%s/%+v/%s/%p", k.session, k.sequence, k.node, k.options, k.counter, k.domain), func() (any, error) {
		b, err := build(ctx)
		if err != nil {
			return nil, err
		}
		c.recent.Add(k, b)
		return b, nil
	})
	if err != nil && ctx.Err() == nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return build(ctx)
	}
	if err != nil {
		return nil, err
	}
	return v.(*ContextBuild), nil
}
