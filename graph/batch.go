package graph

// This file batches the reads of fields that each turn (or receipt) of a
// list would otherwise make alone: a page of 50 turns selecting
// modelCallTotals sent 50 aggregate statements. gqlgen resolves the list's
// elements concurrently, each calling its resolver; the first to ask reads
// the field for every turn (or session) of its list (the list is known: gqlgen keeps
// each resolved field's value in its FieldContext.Result), and the others
// wait for that read. No timer is involved: a page costs one statement per
// field and list, however the goroutines are scheduled.

import (
	"context"
	"errors"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/google/uuid"

	"sessiongraph/ent"
	"sessiongraph/internal/engine"
)

// answerBatches are the batched reads of one query's answer, kept in its
// context by admit. A mutation's and a subscription's have none: each of
// their fields reads alone, so that no field sees what the root field (or
// event) before it read.
type answerBatches struct {
	sessionTotals batch[uuid.UUID, engine.ModelCallTotals]
	totals        batch[engine.TurnKey, engine.ModelCallTotals]
	receipts      batch[engine.TurnKey, []*ent.ContextReceipt]
	calls         batch[engine.TurnKey, engine.ReceiptCalls]
}

type answerBatchesKey struct{}

// errBatchReadStopped is what a list's fields answer when the read made for
// them stopped without a result.
var errBatchReadStopped = errors.New("the batched read of this list stopped without an answer")

// withAnswerBatches gives an answer's context batches of its own.
func withAnswerBatches(ctx context.Context) context.Context {
	return context.WithValue(ctx, answerBatchesKey{}, &answerBatches{})
}

// batchesOf returns the query's batches; nil outside a query, whose
// batches are then nil too: each field reads alone.
func batchesOf(ctx context.Context) *answerBatches {
	b, _ := ctx.Value(answerBatchesKey{}).(*answerBatches)
	return b
}

func (b *answerBatches) sessionsTotals() *batch[uuid.UUID, engine.ModelCallTotals] {
	if b == nil {
		return nil
	}
	return &b.sessionTotals
}

func (b *answerBatches) turnTotals() *batch[engine.TurnKey, engine.ModelCallTotals] {
	if b == nil {
		return nil
	}
	return &b.totals
}

func (b *answerBatches) turnReceipts() *batch[engine.TurnKey, []*ent.ContextReceipt] {
	if b == nil {
		return nil
	}
	return &b.receipts
}

func (b *answerBatches) turnCalls() *batch[engine.TurnKey, engine.ReceiptCalls] {
	if b == nil {
		return nil
	}
	return &b.calls
}

// batch is a field's reads by key: each key is read once per answer, in the
// read that the first of its list to ask made for the whole list.
type batch[K comparable, V any] struct {
	mu    sync.Mutex
	reads map[K]*batchRead[K, V]
}

// batchRead is one read of several keys; done closes when it is over.
type batchRead[K comparable, V any] struct {
	done   chan struct{}
	values map[K]V
	err    error
}

// get returns key's value, reading it with the keys of its list that no
// read has taken yet when none has taken key. With a nil batch (outside an
// answer) it reads key alone.
func (b *batch[K, V]) get(ctx context.Context, key K, list []K, read func(context.Context, []K) (map[K]V, error)) (V, error) {
	if b == nil {
		values, err := read(ctx, []K{key})
		return values[key], err
	}
	b.mu.Lock()
	r, taken := b.reads[key]
	var keys []K
	if !taken {
		if b.reads == nil {
			b.reads = map[K]*batchRead[K, V]{}
		}
		r = &batchRead[K, V]{done: make(chan struct{})}
		for _, k := range append(list, key) {
			if _, ok := b.reads[k]; !ok {
				b.reads[k] = r
				keys = append(keys, k)
			}
		}
	}
	b.mu.Unlock()
	if !taken {
		// The others of the list wait for done: it closes whatever the
		// read does. A read that panics (gqlgen recovers it for this
		// field) leaves them this error rather than empty values.
		r.err = errBatchReadStopped
		defer close(r.done)
		r.values, r.err = read(ctx, keys)
		return r.values[key], r.err
	}
	select {
	case <-r.done:
		return r.values[key], r.err
	case <-ctx.Done():
		var zero V
		return zero, ctx.Err()
	}
}

// listTurns are the turns read together with the field being resolved:
// those of the nearest list of turns above it (a page's edges), or else of
// the nearest list of receipts (a turn's, a session's). A receipt's model
// calls under a page of turns are so read with the whole page's.
func listTurns(ctx context.Context) []engine.TurnKey {
	var receipts []engine.TurnKey
	for fc := graphql.GetFieldContext(ctx); fc != nil; fc = fc.Parent {
		switch list := fc.Result.(type) {
		case []*ent.TurnEdge:
			turns := make([]engine.TurnKey, len(list))
			for i, e := range list {
				turns[i] = engine.KeyOf(e.Node)
			}
			return turns
		case []*ent.Turn:
			turns := make([]engine.TurnKey, len(list))
			for i, t := range list {
				turns[i] = engine.KeyOf(t)
			}
			return turns
		case []*ent.ContextReceipt:
			if receipts == nil {
				for _, r := range list {
					receipts = append(receipts, receiptTurn(r))
				}
			}
		case []*ent.ContextReceiptEdge:
			if receipts == nil {
				for _, e := range list {
					receipts = append(receipts, receiptTurn(e.Node))
				}
			}
		}
	}
	return receipts
}

// listSessions are the ids of the nearest list of sessions above the field
// being resolved (a page's edges, a user's sessions).
func listSessions(ctx context.Context) []uuid.UUID {
	for fc := graphql.GetFieldContext(ctx); fc != nil; fc = fc.Parent {
		switch list := fc.Result.(type) {
		case []*ent.SessionEdge:
			ids := make([]uuid.UUID, len(list))
			for i, e := range list {
				ids[i] = e.Node.ID
			}
			return ids
		case []*ent.Session:
			ids := make([]uuid.UUID, len(list))
			for i, s := range list {
				ids[i] = s.ID
			}
			return ids
		}
	}
	return nil
}

// receiptTurn is the turn a receipt was recorded in.
func receiptTurn(r *ent.ContextReceipt) engine.TurnKey {
	return engine.TurnKey{Session: r.SessionID, Number: r.Turn}
}
