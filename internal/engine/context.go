package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/ent/predicate"
	"sessiongraph/ent/ref"
	"sessiongraph/ent/stepresult"
	"sessiongraph/ent/turn"
	"sessiongraph/ent/turnitem"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/contextbuild"
	"sessiongraph/internal/registry"
	"sessiongraph/internal/tokenizer"
)

// Builds makes a node's prompt context from a session's rows, or from a
// build it remembers, and records it as a receipt when asked to.
type Builds struct {
	client   *ent.Client
	domains  *Domains
	cache    *buildCache
	receipts *Receipts
}

// maxContextRefs bounds the refs a build reads, however busy the session.
const maxContextRefs = 500

// ContextOptions tune a context build; nil fields take the node's defaults.
type ContextOptions struct {
	TurnsWindow *int
	TokenBudget *int
	Tokenizer   *string
	Strategy    *contextbuild.Strategy
	ModelLimit  *int
	KeepRecent  *int
}

// ContextBuild is a node's context and the tokenizer that counted it.
type ContextBuild struct {
	contextbuild.Build
	Tokenizer string
}

// Context builds a node's prompt context. It reads a bounded slice of the
// session in a fixed number of statements (the refs in the window, retained
// or generated with their artifacts; only the turns the node shows) and
// writes nothing, unless Config.RecordContexts names the node and a
// runtime's (CLIENT) key reads it: then the build is recorded as a receipt.
func (bs *Builds) Context(ctx context.Context, s *ent.Session, node contextbuild.Node, in *ContextOptions) (*ContextBuild, error) {
	b, err := bs.context(ctx, s, node, in)
	if err != nil || !bs.receipts.recordsBuildsOf(ctx, s, node) {
		return b, err
	}
	// Recorded as recordContext would, unless the turn's last receipt of
	// the node is this same text. A session that expired meanwhile records
	// nothing: the build was still what its state gave.
	if _, err := bs.receipts.recordReceipt(ctx, s, node, b, true); err != nil && apperr.CodeOf(err) != apperr.SessionExpired {
		return nil, err
	}
	return b, nil
}

// context builds a node's context for session s: a build it remembers,
// one patched from an earlier build, or one made from the rows with ctx.
// Callers asking for the same build at once share one making of it; when
// the one that made it left (its context ended), a caller still waiting
// makes it for itself. A build that fails is not kept.
func (bs *Builds) context(ctx context.Context, s *ent.Session, node contextbuild.Node, in *ContextOptions) (b *ContextBuild, err error) {
	if in == nil {
		in = &ContextOptions{}
	}
	o, counterName, err := contextOptions(s, in)
	if err != nil {
		return nil, err
	}
	o = contextbuild.WithDefaults(node, o)
	d, err := bs.domains.Domain(ctx, s.Domain)
	if err != nil {
		return nil, err
	}
	if s.EventSequence == 0 { // a session read without its sequence: nothing names its state
		b, _, err := bs.buildFromRows(ctx, s, node, o, counterName, d)
		return b, err
	}
	c := bs.cache
	k := buildKey{session: s.ID, sequence: s.EventSequence, node: node, options: o, counter: string(counterName), domain: d}
	if b, ok := c.recent.Get(k); ok {
		return b.build, nil
	}
	// The flight is joined here, not run through a closure, so that a build's
	// statements stay a few calls deep (docs/architecture.md).
	f, making := c.joinFlight(k)
	if !making {
		<-f.done
		if f.err == nil || ctx.Err() != nil || !errors.Is(f.err, context.Canceled) && !errors.Is(f.err, context.DeadlineExceeded) {
			return f.build, f.err
		}
		// The caller that made it left; this one's ctx is still live.
	} else {
		defer func() { c.endFlight(k, f, b, err) }()
	}
	if in, writes := c.base(k); in != nil {
		b, next, ok, err := bs.patch(ctx, s, node, o, counterName, in, writes)
		if err != nil {
			return nil, err
		}
		if ok {
			c.patched.Add(1)
			c.recent.Add(k, &cachedBuild{build: b, in: next})
			return b, nil
		}
	}
	b, inputs, err := bs.buildFromRows(ctx, s, node, o, counterName, d)
	if err != nil {
		return nil, err
	}
	c.recent.Add(k, &cachedBuild{build: b, in: inputs})
	return b, nil
}

// buildFromRows makes a node's context from the session's rows, and
// returns the inputs it made it from.
func (bs *Builds) buildFromRows(ctx context.Context, s *ent.Session, node contextbuild.Node, o contextbuild.Options,
	counterName tokenizer.Name, d *registry.Domain) (*ContextBuild, *buildInputs, error) {
	c := counter(ctx, string(counterName))
	var err error
	snap := contextbuild.Snapshot{
		Turn: s.CurrentTurn, SystemPrompt: s.SystemPrompt, SystemPromptTokens: c.Count(s.SystemPrompt),
		EngagementSummary: s.EngagementSummary, HistorySummary: s.HistorySummary,
		ReasoningSummary: s.ReasoningSummary, PendingClarification: s.PendingClarification,
		TotalTurnTokens: s.TokenCount, TurnCount: s.CurrentTurn, Domain: d,
	}
	complete := true
	if node != contextbuild.Messages {
		// The refs in the window (Understand's: every ref), retained,
		// or generated and not saved (artifacts promoted in the current turn
		// are inside the window). Only ACT and REPLY show artifact content;
		// the others need the status alone, so that every build places a
		// cleared artifact where ACT does.
		if snap.Entries, err = bs.readEntries(ctx, s.ID, entriesSince(s, node, o), node == contextbuild.Act || node == contextbuild.Reply); err != nil {
			return nil, nil, err
		}
		complete = len(snap.Entries) < maxContextRefs
	}
	if snap.Steps, snap.MoreSteps, err = bs.contextSteps(ctx, s, node); err != nil {
		return nil, nil, err
	}
	recount := string(counterName) != s.Tokenizer
	turns, err := bs.turnsShown(ctx, s, node, o, snap.SystemPromptTokens, recount, c)
	if err != nil {
		return nil, nil, err
	}
	items, err := bs.itemsShown(ctx, s, node, turns)
	if err != nil {
		return nil, nil, err
	}
	showTurns(&snap, s, node, turns, items, recount, c)
	b, err := bs.make(ctx, s, node, o, counterName, c, snap)
	if err != nil {
		return nil, nil, err
	}
	return b, &buildInputs{snap: snap, session: buildSessionOf(s), complete: complete}, nil
}

// make makes a node's context from snap, the session's rows as a build
// reads them, counting with c (the counter counterName names); snap is not
// changed (the shown artifacts' UUIDs are scrubbed in copies).
func (bs *Builds) make(ctx context.Context, s *ent.Session, node contextbuild.Node, o contextbuild.Options,
	counterName tokenizer.Name, c tokenizer.Counter, snap contextbuild.Snapshot) (*ContextBuild, error) {
	var err error
	if snap.Entries, err = bs.scrubArtifacts(ctx, s, snap.Entries); err != nil {
		return nil, err
	}
	b, err := contextbuild.Make(node, &snap, o, c)
	if err != nil {
		return nil, apperr.Invalid("node", "%v", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err // counted in part: the build is not what the budget says
	}
	return &ContextBuild{Build: b, Tokenizer: string(counterName)}, nil
}

// scrubArtifacts replaces the UUIDs a runtime left in the shown artifacts'
// content with their refs (or "[unregistered id]"), as a read's records are,
// so that none reaches a prompt, in copies of those entries (entries are
// not changed: a remembered build's inputs keep them as read). Entities the
// snapshot does not hold are looked up by id in one more statement, only
// when there are any.
func (bs *Builds) scrubArtifacts(ctx context.Context, s *ent.Session, entries []*registry.Entry) ([]*registry.Entry, error) {
	// Most builds show no artifact naming a UUID: they cost a look at each
	// artifact, not a set of the session's entities.
	var named []uuid.UUID
	for _, en := range entries {
		if en.Artifact != nil {
			named = append(named, registry.UUIDsIn(en.Artifact.Content)...)
		}
	}
	if len(named) == 0 {
		return entries, nil
	}
	known := map[uuid.UUID]bool{}
	for _, en := range entries {
		if en.EntityID != nil {
			known[*en.EntityID] = true
		}
	}
	var missing []uuid.UUID
	for _, id := range named {
		if !known[id] {
			known[id] = true
			missing = append(missing, id)
		}
	}
	all := slices.Clone(entries)
	if len(missing) > 0 {
		rows, err := bs.client.Ref.Query().Where(ref.SessionID(s.ID), ref.EntityIDIn(missing...)).All(ctx)
		if err != nil {
			return nil, err
		}
		for _, row := range rows {
			all = append(all, toEntry(row))
		}
	}
	r := registry.New(s.CurrentTurn, nil, nil, all...)
	out := make([]*registry.Entry, len(entries))
	for i, en := range entries {
		out[i] = en
		if en.Artifact != nil {
			scrubbed, a := *en, *en.Artifact
			a.Content, _ = r.Scrub(en.Artifact.Content).(map[string]any)
			scrubbed.Artifact = &a
			out[i] = &scrubbed
		}
	}
	return out, nil
}

// contextSteps reads the step results a build shows, newest first, in one
// statement: for ACT the newest FullDetailSteps with their data and up to
// OlderStepSummaries more without it (more tells whether older ones were
// left out); for REPLY those of the current turn and the one before,
// without data. Other nodes show none.
func (bs *Builds) contextSteps(ctx context.Context, s *ent.Session, node contextbuild.Node) (steps []contextbuild.StepResult, more bool, err error) {
	q := bs.client.StepResult.Query().Where(stepresult.SessionID(s.ID)).
		Order(ent.Desc(stepresult.FieldTurn), ent.Desc(stepresult.FieldStep))
	withData := 0
	switch node {
	case contextbuild.Act:
		withData = contextbuild.FullDetailSteps
		q.Limit(contextbuild.FullDetailSteps + contextbuild.OlderStepSummaries + 1)
	case contextbuild.Reply:
		q.Where(stepresult.TurnGTE(s.CurrentTurn - 1)).Limit(2 * maxStep)
	default:
		return nil, false, nil
	}
	if s.FailedTurns > 0 {
		// A failed turn is not part of what the LLM is shown, its steps neither.
		q.Where(func(sel *sql.Selector) {
			t := sql.Table(turn.Table)
			sel.Where(sql.NotIn(sel.C(stepresult.FieldTurn), sql.Select(t.C(turn.FieldNumber)).From(t).
				Where(sql.And(sql.EQ(t.C(turn.FieldSessionID), s.ID), sql.EQ(t.C(turn.FieldStatus), turn.StatusFailed)))))
		})
	}
	q.Select(stepresult.FieldTurn, stepresult.FieldStep, stepresult.FieldKind, stepresult.FieldDescription,
		stepresult.FieldRefs, stepresult.FieldItemCount)
	if withData > 0 {
		q.Modify(func(sel *sql.Selector) {
			// Only the newest few carry their data out of the database:
			// older ones are summarized from their counts and refs.
			sel.AppendSelectExprAs(sql.Expr(fmt.Sprintf("CASE WHEN row_number() OVER (ORDER BY %s DESC, %s DESC) <= %d THEN %s END",
				sel.C(stepresult.FieldTurn), sel.C(stepresult.FieldStep), withData, sel.C(stepresult.FieldData))), stepresult.FieldData)
		})
	}
	rows, err := q.All(ctx)
	if err != nil {
		return nil, false, err
	}
	if node == contextbuild.Act && len(rows) > contextbuild.FullDetailSteps+contextbuild.OlderStepSummaries {
		rows, more = rows[:len(rows)-1], true
	}
	steps = make([]contextbuild.StepResult, len(rows))
	for i, r := range rows {
		steps[i] = contextbuild.StepResult{Turn: r.Turn, Step: r.Step, Kind: r.Kind.String(), Description: r.Description,
			Data: r.Data, Refs: r.Refs, ItemCount: r.ItemCount}
	}
	return steps, more, nil
}

// showTurns puts the turns a build shows (rows, newest first, as
// turnsShown read them) into snap, oldest first; recount counts their
// tokens with c when the build's tokenizer is not the session's.
func showTurns(snap *contextbuild.Snapshot, s *ent.Session, node contextbuild.Node, rows []contextbuild.Turn,
	items map[int][]*ent.TurnItem, recount bool, c tokenizer.Counter) {
	slices.Reverse(rows)
	if recount { // another tokenizer than the session's: its stored counts do not apply
		for i := range rows {
			rows[i].UserTokens, rows[i].AssistantTokens = c.Count(rows[i].UserMessage), c.Count(rows[i].AssistantMessage)
		}
	}
	for i := range rows {
		for _, it := range items[rows[i].Number] {
			item := contextbuild.Item{Kind: it.Kind, Role: it.Role, Name: it.Name, CallID: it.CallID,
				Arguments: it.Arguments, Content: it.Content, JSON: it.JSON, Tokens: it.Tokens}
			if recount {
				item.Tokens = c.Count(itemTokenText(TurnItem{Kind: it.Kind, Name: it.Name, Arguments: it.Arguments, Content: it.Content, JSON: it.JSON}))
			}
			rows[i].Items = append(rows[i].Items, item)
		}
	}
	snap.Turns = append(snap.Turns, rows...)
	// Turn numbers never restart, so the current one, less the failed
	// turns, says how many turns came before the oldest shown (a reset's
	// cleared turns count as cut).
	snap.TurnCount = s.CurrentTurn - s.FailedTurns
	if recount && node == contextbuild.Messages {
		snap.TotalTurnTokens = 0
		for _, t := range snap.Turns {
			snap.TotalTurnTokens += t.UserTokens + t.AssistantTokens
			for _, it := range t.Items {
				snap.TotalTurnTokens += it.Tokens
			}
		}
	}
}

// itemsShown reads the items recorded in the turns a build shows, by
// turn, in one statement: MESSAGES shows them as messages, THINK and
// REPLY as conversation lines; the other builds show none.
func (bs *Builds) itemsShown(ctx context.Context, s *ent.Session, node contextbuild.Node, turns []contextbuild.Turn) (map[int][]*ent.TurnItem, error) {
	if len(turns) == 0 || (node != contextbuild.Messages && node != contextbuild.Think && node != contextbuild.Reply) {
		return nil, nil
	}
	// Only turns that have items: most sessions record none, and their
	// builds read no more than before.
	var numbers []int
	for _, t := range turns {
		if t.ItemCount > 0 {
			numbers = append(numbers, t.Number)
		}
	}
	if len(numbers) == 0 {
		return nil, nil
	}
	rows, err := bs.client.TurnItem.Query().Where(turnitem.SessionID(s.ID), turnitem.TurnIn(numbers...)).
		Order(ent.Asc(turnitem.FieldTurn), ent.Asc(turnitem.FieldPosition)).All(ctx)
	if err != nil {
		return nil, err
	}
	items := map[int][]*ent.TurnItem{}
	for _, r := range rows {
		items[r.Turn] = append(items[r.Turn], r)
	}
	return items, nil
}

// turnsShown reads the newest turns a node's build shows, newest first
// (turnsread.go). A MESSAGES build that fits whole (the session's stored
// token count says so without reading them) reads them all; a
// SLIDING_WINDOW cut keeps every newest message that fits, so it reads a
// page of turns at a time until their tokens fill the window; every other
// build reads a fixed count. Only MESSAGES does without the execution
// summaries.
func (bs *Builds) turnsShown(ctx context.Context, s *ent.Session, node contextbuild.Node, o contextbuild.Options,
	systemTokens int, recount bool, c tokenizer.Counter) ([]contextbuild.Turn, error) {
	tenant, err := access.TenantScope(ctx)
	if err != nil {
		return nil, err
	}
	q := turnsQuery{session: s.ID, summaries: node != contextbuild.Messages, tenant: tenant}
	const page = 50
	room := int(float64(o.ModelLimit) * 0.8)
	paged := false
	switch {
	case node == contextbuild.Messages && systemTokens+s.TokenCount <= room:
	case node != contextbuild.Messages || o.Strategy != contextbuild.SlidingWindow:
		q.limit = contextbuild.TurnsNeeded(node, o)
	default:
		q.limit, paged = page, true
	}
	var turns []contextbuild.Turn
	used := systemTokens
	for {
		query, args := q.statement()
		rows, err := bs.client.QueryContext(ctx, query, args...)
		if err != nil {
			return nil, err
		}
		batch, err := scanTurns(rows, q)
		if err != nil || !paged {
			return batch, err
		}
		turns = append(turns, batch...)
		for _, t := range batch {
			if recount {
				used += c.Count(t.UserMessage) + c.Count(t.AssistantMessage)
			} else {
				used += t.UserTokens + t.AssistantTokens
			}
		}
		if len(batch) < page || used > room {
			return turns, nil
		}
		q.before = batch[len(batch)-1].Number
	}
}

// CheckContextOptions refuses options no build could use, before anything
// is written: a write whose answer carries a build checks the build's
// options first, so that a bad option refuses the whole request and
// changes nothing.
func CheckContextOptions(in *ContextOptions) error {
	if in == nil {
		return nil
	}
	_, _, err := contextOptions(&ent.Session{}, in)
	return err
}

func contextOptions(s *ent.Session, in *ContextOptions) (contextbuild.Options, tokenizer.Name, error) {
	var o contextbuild.Options
	for _, p := range []struct {
		name string
		v    *int
		dst  *int
		min  int
		max  int
	}{
		{"turnsWindow", in.TurnsWindow, &o.TurnsWindow, 1, 1000},
		{"tokenBudget", in.TokenBudget, &o.Budget, 50, 2_000_000},
		{"modelLimit", in.ModelLimit, &o.ModelLimit, 100, 10_000_000},
		{"keepRecent", in.KeepRecent, &o.KeepRecent, 1, 10_000},
	} {
		if p.v == nil {
			continue
		}
		if *p.v < p.min || *p.v > p.max {
			return o, "", apperr.Invalid(p.name, "%s must be between %d and %d, got %d", p.name, p.min, p.max, *p.v)
		}
		*p.dst = *p.v
	}
	if in.Strategy != nil {
		o.Strategy = *in.Strategy
	}
	name := tokenizer.Name(s.Tokenizer)
	if in.Tokenizer != nil {
		n, err := tokenizer.Parse(*in.Tokenizer)
		if err != nil {
			return o, "", apperr.Invalid("tokenizer", "%v", err)
		}
		name = n
	}
	return o, name, nil
}

// liveRefs selects a session's refs that matter now: referenced within the
// window, retained, or generated and not saved yet. Each arm is served by an
// index (ref_session_id_turn_last_referenced, ref_session_id_live), so the
// read does not grow with the session's history.
func liveRefs(s *ent.Session, window int) predicate.Ref {
	return ref.And(ref.SessionID(s.ID), ref.Or(
		ref.TurnLastReferencedGTE(registry.ActiveSince(s.CurrentTurn, window)),
		ref.EntityIDIsNil(),
		ref.ActiveReasonNotNil(),
	))
}
