package engine

import (
	"context"

	"entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/ent/ref"
	"sessiongraph/internal/contextbuild"
	"sessiongraph/internal/registry"
)

// ContextUncached is Context without the builds the engine remembers: what
// making a build costs, for the benchmarks.
func (bs *Builds) ContextUncached(ctx context.Context, s *ent.Session, node contextbuild.Node, in *ContextOptions) (*ContextBuild, error) {
	if in == nil {
		in = &ContextOptions{}
	}
	o, counterName, err := contextOptions(s, in)
	if err != nil {
		return nil, err
	}
	d, err := bs.domains.Domain(ctx, s.Domain)
	if err != nil {
		return nil, err
	}
	b, _, err := bs.buildFromRows(ctx, s, node, contextbuild.WithDefaults(node, o), counterName, d)
	return b, err
}

// PatchedBuilds is how many builds the engine made by patching a build it
// remembered across its own writes.
func (bs *Builds) PatchedBuilds() int64 { return bs.cache.patched.Load() }

// EntriesBothWays reads the refs a node's build shows with readEntries and
// with ent's query, which it replaced.
func (bs *Builds) EntriesBothWays(ctx context.Context, s *ent.Session, node contextbuild.Node, in *ContextOptions) (typed, byEnt []*registry.Entry, err error) {
	if in == nil {
		in = &ContextOptions{}
	}
	o, _, err := contextOptions(s, in)
	if err != nil {
		return nil, nil, err
	}
	o = contextbuild.WithDefaults(node, o)
	if typed, err = bs.readEntries(ctx, s.ID, entriesSince(s, node, o), node == contextbuild.Act || node == contextbuild.Reply); err != nil {
		return nil, nil, err
	}
	byEnt, err = bs.entEntries(ctx, s, node, o)
	return typed, byEnt, err
}

// entEntries is how a build read the refs a build may show, through
// ent's generic scan, before readEntries; kept to prove the two the same.
// It reads the refs a build may show: referenced within the
// window (Understand's are all of them), retained, or generated and not
// saved (artifacts promoted in the current turn are inside the window).
func (bs *Builds) entEntries(ctx context.Context, s *ent.Session, node contextbuild.Node, o contextbuild.Options) ([]*registry.Entry, error) {
	where := liveRefs(s, o.TurnsWindow)
	if node == contextbuild.Understand {
		where = ref.SessionID(s.ID) // every ref: its registry table lists them all
	}
	q := bs.client.Ref.Query().Where(where).
		// Only stable fields order a build, so the same session builds the
		// same text; the ref by its bytes, whatever the database's collation,
		// so that a patched build orders them as the read does (entryOrder).
		Order(ent.Desc(ref.FieldTurnLastReferenced), ent.Asc(ref.FieldTurnCreated), func(s *sql.Selector) {
			s.OrderExpr(sql.Expr(s.C(ref.FieldRef) + ` COLLATE "C"`))
		}).
		Limit(maxContextRefs)
	// Only ACT and REPLY show artifact content; the others need the status
	// alone, so that every build places a cleared artifact where ACT does.
	if node == contextbuild.Act || node == contextbuild.Reply {
		withArtifact(q) // in the refs' statement
	} else {
		withArtifactStatus(q)
	}
	rows, err := q.All(ctx)
	if err != nil {
		return nil, err
	}
	entries := make([]*registry.Entry, len(rows))
	for i, r := range rows {
		if r.Edges.Artifact, err = joinedArtifact(r); err != nil {
			return nil, err
		}
		entries[i] = toEntry(r)
	}
	return entries, nil
}

// SelectedBothWays reads the refs of session id a selection selects with
// readSelected and with ent's query (load's), which it replaced on a
// write's transaction, each in a transaction of its own.
func (rd *Reads) SelectedBothWays(ctx context.Context, id uuid.UUID, entityIDs []uuid.UUID, refs []string,
	pendingOf, pendingLabel string, artifacts bool) (typed, byEnt []*ent.Ref, err error) {
	sel := selection{entityIDs: entityIDs, refs: refs, pendingOf: pendingOf, pendingLabel: pendingLabel, artifacts: artifacts}
	read := func(f func(tx *ent.Tx) ([]*ent.Ref, error)) ([]*ent.Ref, error) {
		tx, err := rd.client.Tx(ctx)
		if err != nil {
			return nil, err
		}
		defer tx.Rollback() //nolint:errcheck // a read
		return f(tx)
	}
	if typed, err = read(func(tx *ent.Tx) ([]*ent.Ref, error) { return readSelected(ctx, tx, id, sel) }); err != nil {
		return nil, nil, err
	}
	byEnt, err = read(func(tx *ent.Tx) ([]*ent.Ref, error) {
		rows, err := queryRefs(ctx, tx.Ref, id, sel)
		return append([]*ent.Ref{}, rows...), err
	})
	return typed, byEnt, err
}
