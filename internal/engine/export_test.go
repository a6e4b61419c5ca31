package engine

import (
	"context"

	"entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/ent/ref"
	"sessiongraph/ent/turn"
	"sessiongraph/internal/contextbuild"
	"sessiongraph/internal/registry"
	"sessiongraph/internal/tokenizer"
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

// TurnsBothWays reads the turns a node's build shows with turnsShown (turnsread.go's statement)
// and with entTurns, which it replaced.
func (bs *Builds) TurnsBothWays(ctx context.Context, s *ent.Session, node contextbuild.Node, in *ContextOptions) (typed, byEnt []contextbuild.Turn, err error) {
	if in == nil {
		in = &ContextOptions{}
	}
	o, counterName, err := contextOptions(s, in)
	if err != nil {
		return nil, nil, err
	}
	o = contextbuild.WithDefaults(node, o)
	c := counter(ctx, string(counterName))
	recount := string(counterName) != s.Tokenizer
	if typed, err = bs.turnsShown(ctx, s, node, o, c.Count(s.SystemPrompt), recount, c); err != nil {
		return nil, nil, err
	}
	rows, err := bs.entTurns(ctx, s, node, o, c.Count(s.SystemPrompt), recount, c)
	if err != nil {
		return nil, nil, err
	}
	byEnt = make([]contextbuild.Turn, 0, len(rows))
	for _, t := range rows {
		bt := contextbuild.Turn{Number: t.Number, UserMessage: t.UserMessage, AssistantMessage: t.AssistantMessage,
			Open: t.Status == turn.StatusOpen, UserTokens: t.UserTokens, AssistantTokens: t.AssistantTokens, ItemCount: t.ItemCount}
		if node != contextbuild.Messages { // MESSAGES shows no summaries, and reads none
			bt.AssistantSummary, bt.Summary = t.AssistantSummary, t.ExecutionSummary
		}
		byEnt = append(byEnt, bt)
	}
	return typed, byEnt, nil
}

// entTurns is how a build read the turns it shows, through ent's generic
// scan, before turnsread.go's statement; kept to prove the two the same.
func (bs *Builds) entTurns(ctx context.Context, s *ent.Session, node contextbuild.Node, o contextbuild.Options,
	systemTokens int, recount bool, c tokenizer.Counter) ([]*ent.Turn, error) {
	q := func() *ent.TurnQuery {
		return bs.client.Turn.Query().Where(turn.SessionID(s.ID), turn.StatusNEQ(turn.StatusFailed)).Order(ent.Desc(turn.FieldNumber))
	}
	room := int(float64(o.ModelLimit) * 0.8)
	switch {
	case node == contextbuild.Messages && systemTokens+s.TokenCount <= room:
		return q().All(ctx)
	case node != contextbuild.Messages || o.Strategy != contextbuild.SlidingWindow:
		return q().Limit(contextbuild.TurnsNeeded(node, o)).All(ctx)
	}
	const page = 50
	var rows []*ent.Turn
	used := systemTokens
	for {
		p := q()
		if len(rows) > 0 {
			p.Where(turn.NumberLT(rows[len(rows)-1].Number))
		}
		batch, err := p.Limit(page).All(ctx)
		if err != nil {
			return nil, err
		}
		rows = append(rows, batch...)
		for _, t := range batch {
			if recount {
				used += c.Count(t.UserMessage) + c.Count(t.AssistantMessage)
			} else {
				used += t.UserTokens + t.AssistantTokens
			}
		}
		if len(batch) < page || used > room {
			return rows, nil
		}
	}
}
