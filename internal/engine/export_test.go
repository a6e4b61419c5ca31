package engine

import (
	"context"

	"sessiongraph/ent"
	"sessiongraph/internal/contextbuild"
)

// ContextUncached is Context without the builds the engine remembers: what
// making a build costs, for the benchmarks.
func (e *Engine) ContextUncached(ctx context.Context, s *ent.Session, node contextbuild.Node, in *ContextOptions) (*ContextBuild, error) {
	return e.context(ctx, s, node, in, false)
}

// PatchedBuilds is how many builds the engine made by patching a build it
// remembered across its own writes.
func (e *Engine) PatchedBuilds() int64 { return e.builds.patched.Load() }
