package engine

// This file holds model calls: the call to a model that a recorded context
// build fed, as the runtime reports it (model, tokens, latency, cost,
// finish reason, error), and their totals per turn and per session, by
// which the session list finds the failed, slow and expensive sessions.

import (
	"context"
	"math"

	entsql "entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/ent/contextreceipt"
	"sessiongraph/ent/modelcall"
	"sessiongraph/ent/predicate"
	"sessiongraph/ent/session"
	"sessiongraph/ent/turn"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/contextbuild"
	"sessiongraph/internal/store"
)

// The bounds of a model call's report: far above any real call, low
// enough that a runtime's bug (a timestamp for a latency, cents as
// dollars times a million) is refused rather than summed into every total.
const (
	// MaxModelCallsPerReceipt bounds the calls one build feeds: a call and
	// its retries.
	MaxModelCallsPerReceipt = 20
	maxModelCallTokens      = 100_000_000
	maxModelCallLatencyMs   = 24 * 60 * 60 * 1000 // a day
	maxModelCallCost        = 1_000_000.0         // US dollars
	maxModelNameBytes       = 200                 // the column's MaxLen
	maxFinishReasonBytes    = 100                 // the column's MaxLen
	maxModelCallErrorBytes  = 10_000
)

// RecordModelCallInput is the model call a recorded build fed. The build is
// named by its receipt, or by its session and node: the newest receipt of
// the node in the session's current turn (a runtime whose builds are
// recorded as it reads them, -record-contexts, never sees their receipts).
type RecordModelCallInput struct {
	ReceiptID    *uuid.UUID
	SessionID    *uuid.UUID
	Node         *contextbuild.Node
	Model        string
	InputTokens  int
	OutputTokens int
	LatencyMs    int
	// Cost is in US dollars.
	Cost         float64
	FinishReason *string
	// Error is what went wrong; nil when the call succeeded.
	Error *string
}

// RecordModelCall attaches a model call to the receipt of the build it fed,
// in one commit with its event. A receipt of another tenant's session is
// not found, like the session.
func (rc *Receipts) RecordModelCall(ctx context.Context, in RecordModelCallInput) (*ent.ModelCall, error) {
	if err := checkModelCall(in); err != nil {
		return nil, err
	}
	receipt, err := rc.fedReceipt(ctx, in)
	if err != nil {
		return nil, err
	}
	w, err := rc.store.Begin(ctx, receipt.SessionID)
	if err != nil {
		return nil, err
	}
	defer w.Rollback()
	n, err := w.Tx.ModelCall.Query().Where(modelcall.SessionID(receipt.SessionID), modelcall.ReceiptID(receipt.ID)).Count(ctx)
	if err != nil {
		return nil, err
	}
	if n >= MaxModelCallsPerReceipt {
		return nil, apperr.TooLarge("receiptID", "context receipt %s has %d model calls, the most a build feeds: record the next build (%s) for another call",
			receipt.ID, MaxModelCallsPerReceipt, apperr.OpRecordContext)
	}
	call, err := w.Tx.ModelCall.Create().SetSessionID(receipt.SessionID).SetReceiptID(receipt.ID).
		SetTurn(receipt.Turn).SetNode(receipt.Node).SetModel(in.Model).
		SetInputTokens(in.InputTokens).SetOutputTokens(in.OutputTokens).SetLatencyMs(in.LatencyMs).SetCost(in.Cost).
		SetNillableFinishReason(in.FinishReason).SetNillableError(in.Error).Save(ctx)
	if err != nil {
		return nil, err
	}
	recorded := store.Event{Kind: KindModelCallRecorded, Payload: map[string]any{
		"receipt": receipt.ID.String(), "turn": receipt.Turn, "model": in.Model,
		"latencyMs": in.LatencyMs, "cost": in.Cost, "failed": in.Error != nil}}
	if _, err := w.Commit(ctx, store.Record(recorded)); err != nil {
		return nil, err
	}
	return rc.client.ModelCall.Adopt(call), nil // committed: later reads go through the client
}

// checkModelCall refuses a report no model call makes, before any read.
// Its strings are UTF-8 without NUL: GraphQL's and MCP's input checks
// refuse any other before an operation runs.
func checkModelCall(in RecordModelCallInput) error {
	switch {
	case in.ReceiptID == nil && (in.SessionID == nil || in.Node == nil):
		return apperr.Invalid("receiptID", "name the build the call was fed: its receiptID, or its sessionID and node (the node's newest receipt in the current turn)")
	case in.Model == "":
		return apperr.Invalid("model", "model is empty: name the model called (gpt-4o, claude-sonnet-4, ...)")
	case len(in.Model) > maxModelNameBytes:
		return apperr.TooLarge("model", "model is %d bytes; at most %d are allowed", len(in.Model), maxModelNameBytes)
	case in.FinishReason != nil && len(*in.FinishReason) > maxFinishReasonBytes:
		return apperr.TooLarge("finishReason", "finishReason is %d bytes; at most %d are allowed", len(*in.FinishReason), maxFinishReasonBytes)
	case in.Error != nil && len(*in.Error) > maxModelCallErrorBytes:
		return apperr.TooLarge("error", "error is %d bytes; at most %d are allowed: record the provider's message, not its whole response", len(*in.Error), maxModelCallErrorBytes)
	case in.Error != nil && *in.Error == "":
		return apperr.Invalid("error", "error is empty: give what went wrong, or null when the call succeeded")
	}
	for _, n := range []struct {
		field string
		value int
		most  int
	}{{"inputTokens", in.InputTokens, maxModelCallTokens}, {"outputTokens", in.OutputTokens, maxModelCallTokens}, {"latencyMs", in.LatencyMs, maxModelCallLatencyMs}} {
		if n.value < 0 || n.value > n.most {
			return apperr.Invalid(n.field, "%s is %d; it must be between 0 and %d", n.field, n.value, n.most)
		}
	}
	if math.IsNaN(in.Cost) || in.Cost < 0 || in.Cost > maxModelCallCost {
		return apperr.Invalid("cost", "cost is %v; it must be between 0 and %v US dollars", in.Cost, maxModelCallCost)
	}
	return nil
}

// fedReceipt finds the receipt a call names: by id (of the session, when
// one is named too), or the newest of the node in the session's current
// turn.
func (rc *Receipts) fedReceipt(ctx context.Context, in RecordModelCallInput) (*ent.ContextReceipt, error) {
	if in.ReceiptID != nil {
		return rc.ContextReceipt(ctx, *in.ReceiptID, in.SessionID)
	}
	s, err := sessionByID(ctx, rc.client, *in.SessionID)
	if err != nil {
		return nil, err
	}
	r, err := rc.client.ContextReceipt.Query().
		Where(contextreceipt.SessionID(s.ID), contextreceipt.Turn(s.CurrentTurn), contextreceipt.NodeEQ(*in.Node)).
		Order(ent.Desc(contextreceipt.FieldCreatedAt), ent.Desc(contextreceipt.FieldID)).First(ctx)
	if ent.IsNotFound(err) {
		return nil, apperr.New(apperr.NotFound, "session %s has no context receipt of %s in turn %d: record the build first (%s, or %s with -record-contexts), then its model call",
			s.ID, *in.Node, s.CurrentTurn, apperr.OpRecordContext, apperr.OpContext)
	}
	return r, err
}

// TurnKey names a turn by its session and number, as its receipts and
// model calls name it.
type TurnKey struct {
	Session uuid.UUID
	Number  int
}

// KeyOf is a turn's TurnKey.
func KeyOf(t *ent.Turn) TurnKey { return TurnKey{t.SessionID, t.Number} }

// ReceiptCalls are a turn's model calls by the receipt of the build each
// fed, oldest first.
type ReceiptCalls map[uuid.UUID][]*ent.ModelCall

// TurnsModelCalls returns the model calls of the builds of each turn named,
// in one statement: the calls of a page's receipts read together.
func (rc *Receipts) TurnsModelCalls(ctx context.Context, turns []TurnKey) (map[TurnKey]ReceiptCalls, error) {
	calls, err := rc.client.ModelCall.Query().Where(predicate.ModelCall(ofTurns(turns))).
		Order(ent.Asc(modelcall.FieldCreatedAt), ent.Asc(modelcall.FieldID)).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[TurnKey]ReceiptCalls, len(turns))
	for _, c := range calls {
		k := TurnKey{c.SessionID, c.Turn}
		if out[k] == nil {
			out[k] = ReceiptCalls{}
		}
		out[k][c.ReceiptID] = append(out[k][c.ReceiptID], c)
	}
	return out, nil
}

// ofTurns matches the rows of the turns named, in a table that names its
// turn by session_id and turn (model_calls, context_receipts, each indexed
// so): per session, its turns by number, so that each arm keeps to its
// session's shard on Citus.
func ofTurns(turns []TurnKey) func(*entsql.Selector) {
	sessions, numbers := bySession(turns)
	return func(s *entsql.Selector) {
		arms := make([]*entsql.Predicate, len(sessions))
		for i, id := range sessions {
			in := make([]any, len(numbers[id]))
			for j, n := range numbers[id] {
				in[j] = n
			}
			arms[i] = entsql.And(entsql.EQ(s.C(modelcall.FieldSessionID), id), entsql.In(s.C(modelcall.FieldTurn), in...))
		}
		if len(arms) == 1 {
			s.Where(arms[0])
		} else {
			s.Where(entsql.Or(arms...))
		}
	}
}

// bySession groups turns' numbers by their session, the sessions in the
// order they come (so that a page's statement reads the same each time).
func bySession(turns []TurnKey) ([]uuid.UUID, map[uuid.UUID][]int) {
	numbers := map[uuid.UUID][]int{}
	var sessions []uuid.UUID
	for _, t := range turns {
		if _, ok := numbers[t.Session]; !ok {
			sessions = append(sessions, t.Session)
		}
		numbers[t.Session] = append(numbers[t.Session], t.Number)
	}
	return sessions, numbers
}

// ModelCallTotals sum the model calls of a turn or a session.
type ModelCallTotals struct {
	Calls        int
	FailedCalls  int
	InputTokens  int
	OutputTokens int
	LatencyMs    int
	// Cost is in US dollars, summed exactly by PostgreSQL.
	Cost float64
}

// SessionsModelCallTotals sums the model calls of each session named in one
// statement, grouped by session: a page of sessions costs one read. A
// session without calls has zero totals.
func (rc *Receipts) SessionsModelCallTotals(ctx context.Context, sessions []uuid.UUID) (map[uuid.UUID]ModelCallTotals, error) {
	var rows []totalsRow
	err := rc.client.ModelCall.Query().Where(modelcall.SessionIDIn(sessions...)).Modify(func(s *entsql.Selector) {
		session := s.C(modelcall.FieldSessionID)
		s.Select(append([]string{entsql.As(session, "session_id")}, totalsColumns(s)...)...).GroupBy(session)
	}).Scan(ctx, &rows)
	if err != nil {
		return nil, err
	}
	out := make(map[uuid.UUID]ModelCallTotals, len(sessions))
	for _, s := range sessions {
		out[s] = ModelCallTotals{}
	}
	for _, r := range rows {
		out[r.SessionID] = r.ModelCallTotals
	}
	return out, nil
}

// TurnsModelCallTotals sums the model calls of each turn named (the calls
// its builds fed) in one statement, grouped by turn: a page's turns cost
// one read, not one each. A turn without calls has zero totals.
func (rc *Receipts) TurnsModelCallTotals(ctx context.Context, turns []TurnKey) (map[TurnKey]ModelCallTotals, error) {
	var rows []totalsRow
	err := rc.client.ModelCall.Query().Where(predicate.ModelCall(ofTurns(turns))).Modify(func(s *entsql.Selector) {
		session, turn := s.C(modelcall.FieldSessionID), s.C(modelcall.FieldTurn)
		s.Select(append([]string{entsql.As(session, "session_id"), entsql.As(turn, "turn")}, totalsColumns(s)...)...).
			GroupBy(session, turn)
	}).Scan(ctx, &rows)
	if err != nil {
		return nil, err
	}
	out := make(map[TurnKey]ModelCallTotals, len(turns))
	for _, t := range turns {
		out[t] = ModelCallTotals{}
	}
	for _, r := range rows {
		out[TurnKey{r.SessionID, r.Turn}] = r.ModelCallTotals
	}
	return out, nil
}

// totalsRow is a row of the totals' aggregate, grouped by turn or not.
type totalsRow struct {
	SessionID uuid.UUID `json:"session_id"`
	Turn      int       `json:"turn"`
	ModelCallTotals
}

// totalsColumns are the aggregates of ModelCallTotals, each named as ent's
// scan names the embedded field it fills (its name in lower case).
func totalsColumns(s *entsql.Selector) []string {
	return []string{
		entsql.As("count(*)", "calls"),
		entsql.As("count(*) FILTER (WHERE "+s.C(modelcall.FieldError)+" IS NOT NULL)", "failedcalls"),
		entsql.As("COALESCE(sum("+s.C(modelcall.FieldInputTokens)+"), 0)", "inputtokens"),
		entsql.As("COALESCE(sum("+s.C(modelcall.FieldOutputTokens)+"), 0)", "outputtokens"),
		entsql.As("COALESCE(sum("+s.C(modelcall.FieldLatencyMs)+"), 0)", "latencyms"),
		entsql.As("COALESCE(sum("+s.C(modelcall.FieldCost)+"), 0)", "cost"),
	}
}

// The session list's filters on model calls (SessionWhereInput): each is a
// subquery on the session's own calls (model_calls (session_id, turn)),
// which keeps to the session's shard on Citus.

// SessionsWithFailedTurn matches sessions that have (with has false: have
// not) a failed turn: one that failed (failTurn) or whose builds fed a
// model call that returned an error.
func SessionsWithFailedTurn(has bool) predicate.Session {
	p := session.Or(session.HasTurnsWith(turn.StatusEQ(turn.StatusFailed)), session.HasModelCallsWith(modelcall.ErrorNotNil()))
	if has {
		return p
	}
	return session.Not(p)
}

// SessionsWithTurnSlowerThan matches sessions with a turn whose model calls
// took longer than ms milliseconds in all.
func SessionsWithTurnSlowerThan(ms int) predicate.Session {
	return func(s *entsql.Selector) {
		calls := entsql.Table(modelcall.Table)
		s.Where(entsql.Exists(entsql.Select(calls.C(modelcall.FieldTurn)).From(calls).
			Where(entsql.ColumnsEQ(calls.C(modelcall.FieldSessionID), s.C(session.FieldID))).
			GroupBy(calls.C(modelcall.FieldTurn)).
			Having(entsql.GT("sum("+calls.C(modelcall.FieldLatencyMs)+")", ms))))
	}
}

// SessionsCostingMoreThan matches sessions whose model calls cost more than
// usd US dollars in all.
func SessionsCostingMoreThan(usd float64) predicate.Session {
	return func(s *entsql.Selector) {
		calls := entsql.Table(modelcall.Table)
		s.Where(entsql.Exists(entsql.Select(calls.C(modelcall.FieldSessionID)).From(calls).
			Where(entsql.ColumnsEQ(calls.C(modelcall.FieldSessionID), s.C(session.FieldID))).
			GroupBy(calls.C(modelcall.FieldSessionID)).
			Having(entsql.GT("sum("+calls.C(modelcall.FieldCost)+")", usd))))
	}
}

// FilterFailedTurns adds SessionsWithFailedTurn to a sessions filter when
// has is given.
func FilterFailedTurns(where *ent.SessionWhereInput, has *bool) error {
	if has != nil {
		where.AddPredicates(SessionsWithFailedTurn(*has))
	}
	return nil
}

// FilterSlowTurns adds SessionsWithTurnSlowerThan to a sessions filter
// when ms is given.
func FilterSlowTurns(where *ent.SessionWhereInput, ms *int) error {
	if ms == nil {
		return nil
	}
	if *ms < 0 {
		return apperr.Invalid("turnSlowerThanMs", "turnSlowerThanMs is %d; give 0 or more milliseconds", *ms)
	}
	where.AddPredicates(SessionsWithTurnSlowerThan(*ms))
	return nil
}

// FilterCostAbove adds SessionsCostingMoreThan to a sessions filter when
// usd is given.
func FilterCostAbove(where *ent.SessionWhereInput, usd *float64) error {
	if usd == nil {
		return nil
	}
	if *usd < 0 || math.IsNaN(*usd) {
		return apperr.Invalid("costAbove", "costAbove is %v; give 0 or more US dollars", *usd)
	}
	where.AddPredicates(SessionsCostingMoreThan(*usd))
	return nil
}
