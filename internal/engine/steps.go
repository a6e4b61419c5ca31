package engine

// This file holds step results: what each step of a turn fetched or
// produced, as the LLM should see it, which the Act node works from.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"
	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/ent/stepresult"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/registry"
	"sessiongraph/internal/store"
)

// Limits of step results.
const (
	// maxStep is the highest step number of a turn; a plan has a handful.
	maxStep = 1000
	// maxStepDataBytes bounds a step's data as JSON. Given data over it is
	// refused; items a record call adds past it are counted, not kept.
	maxStepDataBytes = 256 << 10
	maxStepRefs      = MaxListItems
)

// RecordStepResultInput records a step of the open turn: its kind, what it
// was for, and its data as the LLM should see it.
type RecordStepResultInput struct {
	SessionID   uuid.UUID
	Step        int
	Kind        stepresult.Kind
	Description *string
	// Data replaces the step's items: a list is its items, anything else one
	// item. Nil keeps the items record calls of the step gathered.
	Data any
	// Refs names refs the step used beyond those in its data.
	Refs []string
}

// stepItems is what one call adds to a step's result.
type stepItems struct {
	Step int
	Kind stepresult.Kind
	// Items are encoded by the call, once: a read's records are the bytes
	// its answer writes too.
	Items []json.RawMessage
	Refs  []string
}

// forStep is what a record call with a step adds to it; nil when the call
// carries no step.
func forStep(step *int, kind stepresult.Kind, items []any, refs []string) (*stepItems, error) {
	if step == nil {
		return nil, nil
	}
	encoded := make([]json.RawMessage, len(items))
	for i, item := range items {
		var err error
		if encoded[i], err = json.Marshal(item); err != nil {
			return nil, err
		}
	}
	return forStepEncoded(step, kind, encoded, refs), nil
}

// forStepEncoded is forStep for items the call has encoded already: a
// read's records, whose bytes its answer writes too.
func forStepEncoded(step *int, kind stepresult.Kind, items []json.RawMessage, refs []string) *stepItems {
	if step == nil {
		return nil
	}
	return &stepItems{Step: *step, Kind: kind, Items: items, Refs: refs}
}

// checkStep refuses a step number no plan has, before anything runs.
func checkStep(step *int) error {
	if step != nil && (*step < 1 || *step > maxStep) {
		return apperr.Invalid("step", "step %d is not a step of a turn: steps are numbered from 1 to %d", *step, maxStep)
	}
	return nil
}

// RecordStepResult records or describes a step of the open turn. The data
// and the description go through the registry's scrubber, so a UUID the
// runtime passes becomes its ref (or "[unregistered id]"); refs named must
// be the session's.
func (wr *Writes) RecordStepResult(ctx context.Context, in RecordStepResultInput) (*ent.StepResult, error) {
	return wr.recordStepResult(ctx, nil, in)
}

// recordStepResult is RecordStepResult, as a write of its own (within nil)
// or within a shared one, whose owner has read the open turn already.
func (wr *Writes) recordStepResult(ctx context.Context, within *sharedWrite, in RecordStepResultInput) (*ent.StepResult, error) {
	if err := checkStep(&in.Step); err != nil {
		return nil, err
	}
	if in.Description != nil && len(*in.Description) > maxLabelLen {
		return nil, apperr.Invalid("description", "the description is %d bytes; at most %d are allowed", len(*in.Description), maxLabelLen)
	}
	if len(in.Refs) > maxStepRefs {
		return nil, apperr.Invalid("refs", "%d refs; at most %d are allowed", len(in.Refs), maxStepRefs)
	}
	if in.Data != nil {
		if n := jsonSize(in.Data); n > maxStepDataBytes {
			return nil, apperr.Invalid("data", "the data is %d bytes of JSON; at most %d are allowed: record the part the next steps need", n, maxStepDataBytes)
		}
	}
	if list, ok := in.Data.([]any); ok {
		for i, item := range list {
			if item == nil {
				return nil, apperr.Invalid("data", "data[%d] is null; a step's items are values", i)
			}
		}
	}
	sel := selection{entityIDs: registry.UUIDsIn([]any{in.Data, deref(in.Description)}),
		refs: append(slices.Clone(in.Refs), registry.RefsIn(in.Data)...)}
	var w *store.Tx
	if within != nil {
		w = within.Tx
		if err := w.Flush(ctx); err != nil { // what the operations before wrote
			return nil, conflictError(err)
		}
	} else {
		var err error
		if w, err = wr.store.Begin(ctx, in.SessionID); err != nil {
			return nil, err
		}
		defer w.Rollback()
		open, _, err := openTurn(ctx, w, 0)
		if err != nil {
			return nil, err
		}
		if open == nil {
			return nil, apperr.New(apperr.NoOpenTurn, "session %s has no open turn: a step belongs to the turn that runs it (%s)", in.SessionID, apperr.OpBeginTurn)
		}
	}
	r, _, err := load(ctx, w.Tx.Ref, w.Session, sel)
	if err != nil {
		return nil, err
	}
	for i, name := range in.Refs {
		if _, ok := r.Entry(name); !ok {
			return nil, apperr.UnknownRef(fmt.Sprintf("refs[%d]", i), name)
		}
	}
	row, err := stepAt(ctx, w, in.Step)
	if err != nil {
		return nil, err
	}
	row.Kind = in.Kind
	if in.Description != nil { // shown to the LLM too
		row.Description = r.Scrub(*in.Description).(string)
	}
	if in.Data != nil {
		data := r.Scrub(in.Data)
		row.Data = asItems(data)
		row.ItemCount = len(row.Data)
		row.Refs = union(in.Refs, r.Known(registry.RefsIn(data)))
	} else {
		row.Refs = union(row.Refs, in.Refs)
	}
	out, err := saveStep(ctx, w, row)
	if err != nil {
		return nil, err
	}
	ev := store.Event{Kind: KindStepRecorded, Payload: stepPayload(out)}
	if within != nil {
		within.Events = append(within.Events, ev)
		return out, nil
	}
	if _, err := w.Commit(ctx, store.Record(ev)); err != nil {
		return nil, err
	}
	return wr.client.StepResult.Adopt(out), nil // committed: later edge reads go through the client
}

// addToStep adds a record call's items to its step of the current turn, in
// one upsert whatever the step already holds: a new step takes the call's
// kind and the items that fit maxStepDataBytes; an existing one keeps its
// kind and description, appends the items if the data stays within the
// limit (else keeps its data as it was), adds the refs it lacks, and counts
// every item. A session that has not begun a turn has no step to add to.
func addToStep(w *store.Tx, add *stepItems) (added bool, err error) {
	if add == nil || w.Session.CurrentTurn < 1 {
		return false, nil
	}
	// The data is the kept items' encodings in a list, as json.Marshal
	// would write them (each is json.Marshal's compact output already).
	all := 2 // the brackets
	for _, b := range add.Items {
		all += len(b) + 1
	}
	data := append(make([]byte, 0, min(all, maxStepDataBytes)), '[')
	size := 2
	for _, b := range add.Items {
		if n := len(b) + 1; size+n <= maxStepDataBytes {
			if len(data) > 1 {
				data = append(data, ',')
			}
			data = append(data, b...)
			size += n
		}
	}
	data = append(data, ']')
	now := w.Now.Truncate(time.Microsecond)
	refs, err := json.Marshal(union(nil, add.Refs))
	if err != nil {
		return false, err
	}
	query, args := sql.Dialect(dialect.Postgres).Insert(stepresult.Table).
		Columns(stepresult.FieldID, stepresult.FieldSessionID, stepresult.FieldTurn, stepresult.FieldStep, stepresult.FieldKind,
			stepresult.FieldData, stepresult.FieldRefs, stepresult.FieldItemCount, stepresult.FieldCreatedAt, stepresult.FieldUpdatedAt).
		Values(stepresult.DefaultID(), w.Session.ID, w.Session.CurrentTurn, add.Step, add.Kind, data, refs, len(add.Items), now, now).
		OnConflict(
			sql.ConflictColumns(stepresult.FieldSessionID, stepresult.FieldTurn, stepresult.FieldStep),
			sql.ResolveWith(func(u *sql.UpdateSet) {
				old, excluded := u.Table(), sql.Dialect(dialect.Postgres).Table("excluded")
				data, newData := old.C(stepresult.FieldData), excluded.C(stepresult.FieldData)
				u.Set(stepresult.FieldData, sql.ExprFunc(func(b *sql.Builder) {
					b.WriteString("CASE WHEN octet_length(" + data + "::text) + octet_length(" + newData + "::text) <= ").
						Arg(maxStepDataBytes).WriteString(" THEN " + data + " || " + newData + " ELSE " + data + " END")
				}))
				// The refs of both, each once, in the order first seen: the
				// old ones, then the call's that are not among them (each
				// list holds a ref once). Functions, not a subquery: Citus
				// refuses subqueries in an INSERT, and takes only immutable
				// functions in its DO UPDATE.
				refs, newRefs := old.C(stepresult.FieldRefs), excluded.C(stepresult.FieldRefs)
				u.Set(stepresult.FieldRefs, sql.Expr(refs+" || jsonb_path_query_array("+newRefs+
					", '$[*] ? (!(@ == $old[*]))', jsonb_set('{}'::jsonb, '{old}', "+refs+"))"))
				u.Set(stepresult.FieldItemCount, sql.Expr(old.C(stepresult.FieldItemCount)+" + "+excluded.C(stepresult.FieldItemCount)))
				u.SetExcluded(stepresult.FieldUpdatedAt)
			}),
		).Query()
	w.ExecWithCommit(query, args...)
	return true, nil
}

// stepAt reads a step of the current turn, or returns a new one to fill.
func stepAt(ctx context.Context, w *store.Tx, step int) (*ent.StepResult, error) {
	turn := w.Session.CurrentTurn
	row, err := w.Tx.StepResult.Query().
		Where(stepresult.SessionID(w.Session.ID), stepresult.Turn(turn), stepresult.Step(step)).Only(ctx)
	if ent.IsNotFound(err) {
		return &ent.StepResult{ID: uuid.Must(uuid.NewV7()), SessionID: w.Session.ID, Turn: turn, Step: step,
			Data: []any{}, Refs: []string{}, CreatedAt: w.Now}, nil
	}
	return row, err
}

// saveStep writes a step result (an upsert on its session, turn and step,
// safe under the session lock) and returns it as stored: every column is
// written from row, so no read-back is needed.
func saveStep(ctx context.Context, w *store.Tx, row *ent.StepResult) (*ent.StepResult, error) {
	// PostgreSQL keeps microseconds, so the returned row holds what a read would.
	now := w.Now.Truncate(time.Microsecond)
	c := w.Tx.StepResult.Create().SetID(row.ID).SetSessionID(row.SessionID).SetTurn(row.Turn).SetStep(row.Step).
		SetKind(row.Kind).SetDescription(row.Description).SetData(row.Data).SetRefs(row.Refs).
		SetItemCount(row.ItemCount).SetCreatedAt(row.CreatedAt.Truncate(time.Microsecond)).SetUpdatedAt(now)
	c.OnConflictColumns(stepresult.FieldSessionID, stepresult.FieldTurn, stepresult.FieldStep).UpdateNewValues()
	return c.Save(ctx)
}

func stepPayload(r *ent.StepResult) map[string]any {
	return map[string]any{"turn": r.Turn, "step": r.Step, "kind": r.Kind, "itemCount": r.ItemCount, "refs": r.Refs}
}

// asItems is data as a step's items: a list is its items, anything else
// one item.
func asItems(data any) []any {
	if list, ok := data.([]any); ok {
		return list
	}
	return []any{data}
}

// union is a's names followed by b's not in a, once each.
func union(a, b []string) []string {
	out := make([]string, 0, len(a)+len(b))
	seen := map[string]bool{}
	for _, n := range append(slices.Clone(a), b...) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// jsonSize is v's size as JSON.
func jsonSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}

// StepResultsOfTurn lists a turn's step results in step order.
func (rd *Reads) StepResultsOfTurn(ctx context.Context, sessionID uuid.UUID, turn int) ([]*ent.StepResult, error) {
	return rd.client.StepResult.Query().
		Where(stepresult.SessionID(sessionID), stepresult.Turn(turn)).
		Order(ent.Asc(stepresult.FieldStep)).Limit(maxStep).All(ctx)
}
