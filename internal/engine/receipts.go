package engine

// This file holds context receipts: a build as it was sent to the model,
// recorded when the runtime asks, so that an admin can see what the model
// saw at every turn and how it changed.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/pmezard/go-difflib/difflib"

	"sessiongraph/ent"
	"sessiongraph/ent/apikey"
	"sessiongraph/ent/contextreceipt"
	"sessiongraph/ent/predicate"
	"sessiongraph/ent/schema/schematype"
	"sessiongraph/ent/session"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/contextbuild"
	"sessiongraph/internal/store"
)

// Receipts records and reads context receipts, and traces facts through
// the builds they were shown in.
type Receipts struct {
	client *ent.Client
	store  *store.Store
	cfg    Config
}

// RecordContextInput asks for a node's context, to be sent to the model and
// recorded as a receipt.
type RecordContextInput struct {
	SessionID uuid.UUID
	Node      contextbuild.Node
	Options   *ContextOptions
}

// RecordedContext is the build the runtime sends and its receipt.
type RecordedContext struct {
	Build   *ContextBuild
	Receipt *ent.ContextReceipt
}

// RecordContext builds a node's context as Context does and records it as a
// receipt of the session's current turn, in one commit with its event: the
// node, budget, tokenizer, each section's tokens, the refs of each tier,
// what was cut and why, and the text (or, with Config.ReceiptHashOnly, its
// SHA-256 alone). The receipt names the event sequence the build was made
// from, which is the state it shows even if another write lands before the
// receipt's own.
func (bs *Builds) RecordContext(ctx context.Context, in RecordContextInput) (*RecordedContext, error) {
	s, err := sessionByID(ctx, bs.client, in.SessionID)
	if err != nil {
		return nil, err
	}
	b, err := bs.context(ctx, s, in.Node, in.Options)
	if err != nil {
		return nil, err
	}
	receipt, err := bs.receipts.recordReceipt(ctx, s, in.Node, b, false)
	if err != nil {
		return nil, err
	}
	return &RecordedContext{Build: b, Receipt: receipt}, nil
}

// MaxReceiptsPerTurn bounds the receipts one turn keeps: a runtime that
// records in a loop fills its turn, not the database.
const MaxReceiptsPerTurn = 100

// recordReceipt writes b as a receipt of s's current turn with its event,
// unless the turn's last receipt of the node has the same text: the
// runtime that sends one prompt twice sent it once, and that receipt is
// the answer (with unlessSame, an automatic recording, nil). A turn keeps
// at most MaxReceiptsPerTurn receipts: past it, recordContext is refused
// with INPUT_TOO_LARGE and an automatic recording writes nothing.
func (rc *Receipts) recordReceipt(ctx context.Context, s *ent.Session, node contextbuild.Node, b *ContextBuild, unlessSame bool) (*ent.ContextReceipt, error) {
	sum := sha256.Sum256([]byte(b.Text))
	textSum := hex.EncodeToString(sum[:])
	sections := make([]schematype.ReceiptSection, len(b.Sections))
	for i, sec := range b.Sections {
		sections[i] = schematype.ReceiptSection{Name: sec.Name, TokenCount: sec.TokenCount, Truncated: sec.Truncated}
	}
	w, err := rc.store.Begin(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	defer w.Rollback()
	last, err := w.Tx.ContextReceipt.Query().
		Where(contextreceipt.SessionID(s.ID), contextreceipt.Turn(s.CurrentTurn), contextreceipt.NodeEQ(node)).
		Order(ent.Desc(contextreceipt.FieldCreatedAt), ent.Desc(contextreceipt.FieldID)).First(ctx)
	if err != nil && !ent.IsNotFound(err) {
		return nil, err
	}
	if last != nil && last.TextSha256 == textSum {
		if unlessSame {
			return nil, nil
		}
		return rc.client.ContextReceipt.Adopt(last), nil // its write ended: read through the client
	}
	n, err := w.Tx.ContextReceipt.Query().Where(contextreceipt.SessionID(s.ID), contextreceipt.Turn(s.CurrentTurn)).Count(ctx)
	if err != nil {
		return nil, err
	}
	if n >= MaxReceiptsPerTurn {
		if unlessSame {
			return nil, nil
		}
		return nil, apperr.New(apperr.InputTooLarge,
			"turn %d holds %d context receipts, the most a turn keeps: end the turn to record more", s.CurrentTurn, MaxReceiptsPerTurn)
	}
	create := w.Tx.ContextReceipt.Create().SetSessionID(s.ID).SetTurn(s.CurrentTurn).SetNode(node).
		SetEventSequence(s.EventSequence).SetBudget(b.Budget).SetTokenizer(b.Tokenizer).SetTokenCount(b.TokenCount).
		SetSections(sections).SetTiers(b.Tiers).SetTruncatedTurns(b.TruncatedTurns).SetNotes(nonNil(b.Notes)).
		SetTextSha256(textSum)
	if !rc.cfg.ReceiptHashOnly {
		create.SetText(b.Text)
	}
	receipt, err := create.Save(ctx)
	if err != nil {
		return nil, err
	}
	recorded := store.Event{Kind: KindContextRecorded, Payload: map[string]any{
		"receipt": receipt.ID.String(), "node": string(node), "turn": s.CurrentTurn, "tokenCount": b.TokenCount}}
	if _, err := w.Commit(ctx, store.Record(recorded)); err != nil {
		return nil, err
	}
	return rc.client.ContextReceipt.Adopt(receipt), nil // committed: later edge reads go through the client
}

// recordsBuildsOf reports whether a context read in ctx of node is also
// recorded (Config.RecordContexts): only a runtime's read, with a CLIENT
// key, is a prompt sent to a model; an admin or a reader looking at a build
// in the dashboard sends nothing, and reading stays a read for them.
func (rc *Receipts) recordsBuildsOf(ctx context.Context, s *ent.Session, node contextbuild.Node) bool {
	if !slices.Contains(rc.cfg.RecordContexts, node) || s.Status != session.StatusActive {
		return false
	}
	p, ok := access.FromContext(ctx)
	return ok && p.Role == apikey.RoleClient
}

// TextRetentionEnds clears the text of receipts recorded longer ago than
// Config.ReceiptTextRetention, keeping their hashes, and returns how many;
// with no retention set it does nothing. The reaper runs it.
func (rc *Receipts) TextRetentionEnds(ctx context.Context) (int, error) {
	if rc.cfg.ReceiptTextRetention <= 0 {
		return 0, nil
	}
	return rc.store.ClearReceiptTexts(ctx, time.Now().Add(-rc.cfg.ReceiptTextRetention))
}

// ContextReceipt returns a receipt by id, of the session when one is
// named; another tenant's, or another session's, is not found. Naming the
// session lets Citus read the session's shard only: an id alone is looked
// up on every shard.
func (rc *Receipts) ContextReceipt(ctx context.Context, id uuid.UUID, session *uuid.UUID) (*ent.ContextReceipt, error) {
	q := rc.client.ContextReceipt.Query().Where(contextreceipt.ID(id))
	if session != nil {
		q.Where(contextreceipt.SessionID(*session))
	}
	r, err := q.Only(ctx)
	if ent.IsNotFound(err) {
		return nil, apperr.New(apperr.NotFound, "context receipt %s not found", id)
	}
	return r, err
}

// TurnsReceipts returns the receipts recorded during each turn named,
// oldest first, in one statement: per session, its turns by number
// (context_receipts (session_id, turn)).
func (rc *Receipts) TurnsReceipts(ctx context.Context, turns []TurnKey) (map[TurnKey][]*ent.ContextReceipt, error) {
	receipts, err := rc.client.ContextReceipt.Query().Where(predicate.ContextReceipt(ofTurns(turns))).
		Order(ent.Asc(contextreceipt.FieldCreatedAt), ent.Asc(contextreceipt.FieldID)).All(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[TurnKey][]*ent.ContextReceipt, len(turns))
	for _, r := range receipts {
		k := TurnKey{r.SessionID, r.Turn}
		out[k] = append(out[k], r)
	}
	return out, nil
}

// ReceiptDiff is how a node's recorded context changed from one receipt to
// a later one.
type ReceiptDiff struct {
	From, To     *ent.ContextReceipt
	Tiers        []TierDiff
	Sections     []SectionDiff
	Lines        []LineDiff
	TextCompared bool
}

// TierDiff names the refs that entered and left one tier.
type TierDiff struct {
	Tier          string
	Entered, Left []string
}

// SectionDiff is one section's tokens in each build; nil where a build had
// no such section.
type SectionDiff struct {
	Name          string
	Before, After *int
	Delta         int
}

// LineDiff is one line added to or removed from the text.
type LineDiff struct {
	Change string // ADDED or REMOVED
	Text   string
}

// DiffReceipts compares two receipts of one node of one session (named, or
// nil to find it from the receipts): the refs
// that entered or left each tier, each section's tokens before and after,
// and the lines removed and added (when both texts are kept).
func (rc *Receipts) DiffReceipts(ctx context.Context, fromID, toID uuid.UUID, session *uuid.UUID) (*ReceiptDiff, error) {
	from, err := rc.ContextReceipt(ctx, fromID, session)
	if err != nil {
		return nil, err
	}
	to, err := rc.ContextReceipt(ctx, toID, session)
	if err != nil {
		return nil, err
	}
	if from.SessionID != to.SessionID {
		return nil, apperr.Invalid("to", "the receipts belong to two sessions; compare builds of one session")
	}
	if from.Node != to.Node {
		return nil, apperr.Invalid("to", "the receipts are of %s and %s; compare builds of one node", from.Node, to.Node)
	}
	d := &ReceiptDiff{From: from, To: to}
	for _, t := range []struct {
		name     string
		was, now []string
	}{
		{"active", from.Tiers.Active, to.Tiers.Active},
		{"generated", from.Tiers.Generated, to.Tiers.Generated},
		{"retained", from.Tiers.Retained, to.Tiers.Retained},
	} {
		d.Tiers = append(d.Tiers, TierDiff{Tier: t.name, Entered: missingFrom(t.now, t.was), Left: missingFrom(t.was, t.now)})
	}
	before := map[string]int{}
	for _, s := range from.Sections {
		before[s.Name] = s.TokenCount
	}
	seen := map[string]bool{}
	for _, s := range to.Sections {
		seen[s.Name] = true
		sd := SectionDiff{Name: s.Name, After: new(s.TokenCount), Delta: s.TokenCount}
		if b, ok := before[s.Name]; ok {
			sd.Before, sd.Delta = new(b), s.TokenCount-b
		}
		d.Sections = append(d.Sections, sd)
	}
	for _, s := range from.Sections {
		if !seen[s.Name] {
			d.Sections = append(d.Sections, SectionDiff{Name: s.Name, Before: new(s.TokenCount), Delta: -s.TokenCount})
		}
	}
	if from.Text != nil && to.Text != nil {
		d.TextCompared = true
		d.Lines = diffLines(*from.Text, *to.Text)
	}
	return d, nil
}

// missingFrom lists the refs of a that b lacks, in a's order.
func missingFrom(a, b []string) []string {
	in := make(map[string]bool, len(b))
	for _, r := range b {
		in[r] = true
	}
	out := []string{}
	for _, r := range a {
		if !in[r] {
			out = append(out, r)
		}
	}
	return out
}

// diffLines lists the lines removed from a and added in b, in text order.
func diffLines(a, b string) []LineDiff {
	from, to := strings.Split(a, "\n"), strings.Split(b, "\n")
	out := []LineDiff{}
	// No autojunk: a build repeats lines (blank ones, table rules) that
	// Python's heuristic, which difflib copies, would take for noise.
	for _, op := range difflib.NewMatcherWithJunk(from, to, false, nil).GetOpCodes() {
		if op.Tag == 'e' {
			continue
		}
		for _, line := range from[op.I1:op.I2] {
			out = append(out, LineDiff{Change: "REMOVED", Text: line})
		}
		for _, line := range to[op.J1:op.J2] {
			out = append(out, LineDiff{Change: "ADDED", Text: line})
		}
	}
	return out
}
