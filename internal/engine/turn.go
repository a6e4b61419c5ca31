package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"entgo.io/ent/dialect"
	"entgo.io/ent/dialect/sql"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"sessiongraph/ent"
	"sessiongraph/ent/artifact"
	"sessiongraph/ent/ref"
	"sessiongraph/ent/schema/schematype"
	"sessiongraph/ent/stepresult"
	"sessiongraph/ent/turn"
	"sessiongraph/ent/turnitem"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/contextbuild"
	"sessiongraph/internal/store"
)

// Turns begins, updates, ends and fails a session's turns, and resets its
// conversation; a turn's end carries its closing registry writes.
type Turns struct {
	client  *ent.Client
	store   *store.Store
	domains *Domains
	writes  *Writes
	// tokenizers lets recordItems count its items before the session's lock.
	tokenizers sessionTokenizers
}

const fullReasoningSummaries = 2

// BeginTurn opens the session's next turn with the user's message, counting
// its tokens once so that no build re-tokenizes it.
func (ts *Turns) BeginTurn(ctx context.Context, sessionID uuid.UUID, userMessage string) (*ent.Turn, error) {
	if len(userMessage) > MaxTextBytes {
		return nil, apperr.TooLarge("userMessage", "the message is %d bytes; at most %d are allowed", len(userMessage), MaxTextBytes)
	}
	w, err := ts.store.Begin(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	defer w.Rollback()
	tokens, err := countTokens(ctx, w.Session.Tokenizer, userMessage)
	if err != nil {
		return nil, err
	}
	number := w.Session.CurrentTurn + 1
	// No read first: the index of one open turn per session refuses the
	// insert while the current turn is open. The insert goes with the
	// commit (WithCommit), so its refusal is the commit's answer.
	inProgress := func(err error) error {
		if isOpenTurnConflict(err) {
			return apperr.New(apperr.TurnInProgress, "turn %d is still open: end it (%s) or fail it (%s) before beginning another", w.Session.CurrentTurn, apperr.OpEndTurn, apperr.OpFailTurn)
		}
		return err
	}
	out, err := w.WithCommit.Turn.Create().SetSessionID(sessionID).SetNumber(number).
		SetUserMessage(userMessage).SetUserTokens(tokens).SetStartedAt(w.Now).Save(ctx)
	if err != nil {
		return nil, inProgress(err)
	}
	w.Update().SetCurrentTurn(number).AddTokenCount(tokens)
	// Not activity yet: a turn counts when it ends well (see store.Started).
	began := store.Event{Kind: KindTurnBegan, Payload: map[string]any{"turn": number}}
	if _, err := w.Commit(ctx, store.Mutation{Events: []store.Event{began}, Activity: store.Started}); err != nil {
		return nil, inProgress(err)
	}
	return ts.client.Turn.Adopt(out), nil // committed: later edge reads go through the client
}

// openTurnIndex is the index that allows one open turn per session (the
// Turn schema's StorageKey); uniqueViolation is PostgreSQL's error code
// for a refused duplicate.
const (
	openTurnIndex   = "turn_one_open_per_session"
	uniqueViolation = "23505"
)

// isOpenTurnConflict reports an insert refused because the session already
// has an open turn.
func isOpenTurnConflict(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == uniqueViolation && violatedIndex(pgErr) == openTurnIndex
}

// shardIndex finds the index a unique violation names in its message, with
// a shard's suffix when a Citus worker raised it ("turn_one_open_per_session_102040").
var shardIndex = regexp.MustCompile(`unique constraint "([a-z_]+?)(_[0-9]+)?"`)

// violatedIndex is the index whose uniqueness err violated. PostgreSQL names
// it in the error's constraint field; a Citus coordinator passes a worker's
// error on without that field, naming the shard's index in the message, so
// the name is read from there without the shard's suffix.
func violatedIndex(err *pgconn.PgError) string {
	if err.ConstraintName != "" {
		return err.ConstraintName
	}
	if m := shardIndex.FindStringSubmatch(err.Message); m != nil {
		return m[1]
	}
	return ""
}

// UpdateTurnInput adds to the open turn's execution summary while the turn
// runs: Think's decision, Act's steps, Understand's curation.
type UpdateTurnInput struct {
	SessionID uuid.UUID
	Summary   schematype.ExecutionSummary
}

// UpdateTurn merges into the open turn's execution summary: given fields
// replace, steps are appended.
func (ts *Turns) UpdateTurn(ctx context.Context, in UpdateTurnInput) (*ent.Turn, error) {
	tw, err := beginOpenTurn(ctx, ts.store, in.SessionID, keepsOpen)
	if err != nil {
		return nil, err
	}
	defer tw.Rollback()
	tw.done.ExecutionSummary = merge(tw.done.ExecutionSummary, &in.Summary)
	return ts.commitOpenTurn(ctx, tw, store.Record(store.Event{Kind: KindTurnUpdated, Payload: map[string]any{"turn": tw.done.Number}}))
}

// EndTurnInput completes the open turn.
type EndTurnInput struct {
	SessionID        uuid.UUID
	AssistantMessage string
	Summary          *schematype.ExecutionSummary
	// Closing are writes applied before the turn ends, in the same commit
	// (see CloseTurn).
	Closing []ClosingWrite
}

// EndTurn completes the open turn: it stores the assistant's message with
// its token count and its summary by the three summarization rules, merges the
// execution summary, compresses the summary that is now third from last
// into the session's reasoning summary (the last two stay in full), and
// clears the artifacts promoted in the turn (their content was kept only
// for linked records).
func (ts *Turns) EndTurn(ctx context.Context, in EndTurnInput) (*ent.Turn, error) {
	closed, err := ts.CloseTurn(ctx, in)
	if err != nil {
		return nil, err
	}
	return closed.Turn, nil
}

// completeTurn is what ending a turn changes, on done, a copy of the open
// turn, and on the session; the caller writes done (commitOpenTurn, or
// RecordExchange's insert). cleared is how many artifacts the statement
// that read the turns cleared (readTurns), or nil when it did not clear.
func (ts *Turns) completeTurn(ctx context.Context, w *store.Tx, done *ent.Turn, message string, summary *schematype.ExecutionSummary, cleared *int) (store.Event, error) {
	d, err := ts.domains.domain(ctx, w.Tx.EntityType, w.Session.Domain)
	if err != nil {
		return store.Event{}, err
	}
	var names []string
	generatedType := contextbuild.GeneratedType(message, d)
	if generatedType != "" {
		if names, err = generatedNames(ctx, w, done.Number, generatedType, message); err != nil {
			return store.Event{}, err
		}
	}
	if cleared == nil {
		n, err := clearTurnState(ctx, w)
		if err != nil {
			return store.Event{}, err
		}
		cleared = &n
	}
	tokens, err := countTokens(ctx, w.Session.Tokenizer, message)
	if err != nil {
		return store.Event{}, err
	}
	done.Status, done.CompletedAt = turn.StatusCompleted, &w.Now
	done.AssistantMessage, done.AssistantTokens = message, tokens
	done.AssistantSummary = contextbuild.SummarizeAssistant(message, d, names)
	done.ExecutionSummary = merge(done.ExecutionSummary, summary)
	w.Update().AddTokenCount(tokens)
	return store.Event{Kind: KindTurnEnded, Payload: map[string]any{"turn": done.Number, "clearedArtifacts": *cleared}}, nil
}

// FailTurn closes the open turn as failed, with the reason. A failed turn
// is not activity: the session's expiry goes back to what its last
// successful write left (see store.Failed). Nor is it part of the
// conversation an LLM is shown: builds leave it out, and its user
// message's tokens leave the session's count.
func (ts *Turns) FailTurn(ctx context.Context, sessionID uuid.UUID, reason string) (*ent.Turn, error) {
	tw, err := beginOpenTurn(ctx, ts.store, sessionID, closes)
	if err != nil {
		return nil, err
	}
	defer tw.Rollback()
	if _, err := tw.Tx.Tx.ExecContext(ctx, dropQueue, sessionID); err != nil {
		return nil, err
	}
	done := tw.done
	// The items recorded in the turn leave the count with its user message.
	itemTokens := 0
	if done.ItemCount > 0 {
		counts, err := tw.Tx.Tx.TurnItem.Query().Where(turnitem.SessionID(sessionID), turnitem.Turn(done.Number)).
			Select(turnitem.FieldTokens).Ints(ctx) // at most MaxTurnItems
		if err != nil {
			return nil, err
		}
		for _, n := range counts {
			itemTokens += n
		}
	}
	done.Status, done.CompletedAt = turn.StatusFailed, &tw.Now
	done.ExecutionSummary = merge(done.ExecutionSummary, &schematype.ExecutionSummary{BlockedReason: &reason})
	tw.Update().AddFailedTurns(1).AddTokenCount(-min(done.UserTokens+itemTokens, tw.Session.TokenCount))
	failed := store.Event{Kind: KindTurnFailed, Payload: map[string]any{"turn": done.Number, "reason": reason}}
	return ts.commitOpenTurn(ctx, tw, store.Mutation{Events: []store.Event{failed}, Activity: store.Failed})
}

// ResetConversation clears the session's history, its turns, their items and
// step results, and keeps the session, its registry and, if asked, its system
// prompt. Turn numbers go on from where they were, so
// refs' turn marks stay meaningful.
func (ts *Turns) ResetConversation(ctx context.Context, sessionID uuid.UUID, keepSystemPrompt bool) (*ent.Session, error) {
	w, err := ts.store.Begin(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	defer w.Rollback()
	n, err := w.Tx.Turn.Delete().Where(turn.SessionID(sessionID)).Exec(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := w.Tx.StepResult.Delete().Where(stepresult.SessionID(sessionID)).Exec(ctx); err != nil {
		return nil, err
	}
	if _, err := w.Tx.TurnItem.Delete().Where(turnitem.SessionID(sessionID)).Exec(ctx); err != nil {
		return nil, err
	}
	u := w.Update().SetTokenCount(0).SetHistorySummary("").SetReasoningSummary("").
		SetEngagementSummary("").ClearPendingClarification()
	if !keepSystemPrompt {
		u.SetSystemPrompt("")
	}
	reset := store.Event{Kind: KindConversationReset, Payload: map[string]any{"deletedTurns": n, "keptSystemPrompt": keepSystemPrompt}}
	return w.Commit(ctx, store.Mutation{Events: []store.Event{reset}, ReadBack: true})
}

// compressReasoning folds the summary of old, the turn two before the one
// just closed, into the session's reasoning summary, once: the last two
// turns' summaries are shown in full, older ones only as that line. old is
// nil when there is no such turn (too early, or cleared by a reset).
func compressReasoning(w *store.Tx, old *ent.Turn) {
	if old == nil || old.Status == turn.StatusFailed { // not part of the conversation
		return
	}
	line := contextbuild.ReasoningLine(old.Number, old.ExecutionSummary)
	summary := strings.TrimSpace(w.Session.ReasoningSummary + "\n" + line)
	w.Update().SetReasoningSummary(summary)
}

// maxArchiveNames bounds the generated refs the assistant summary's first
// rule reads for names: the most recently referenced of the type.
const maxArchiveNames = 100

// generatedNames returns the labels the assistant summary's first rule
// names for content of entityType: what was generated in the turn, or else
// archived generated content the turn worked with again (referenced in it,
// or named in the message), so that a later turn showing it again still
// says what it showed.
func generatedNames(ctx context.Context, w *store.Tx, number int, entityType, message string) ([]string, error) {
	rows, err := w.Tx.Ref.Query().
		Where(ref.SessionID(w.Session.ID), ref.EntityType(entityType), ref.RefHasPrefix("gen_")).
		Order(ent.Desc(ref.FieldTurnLastReferenced), ent.Asc(ref.FieldCreatedAt)).Limit(maxArchiveNames).All(ctx)
	if err != nil {
		return nil, err
	}
	lower := strings.ToLower(message)
	var now, again []string
	for _, r := range rows {
		switch {
		case r.TurnCreated == number:
			now = append(now, r.Label)
		case r.Label != "" && (r.TurnLastReferenced == number || strings.Contains(lower, strings.ToLower(r.Label))):
			again = append(again, r.Label)
		}
	}
	if len(now) == 0 {
		return again, nil
	}
	return now, nil
}

// merge adds b's given fields to a's: scalars replace, steps append,
// curation replaces.
func merge(a, b *schematype.ExecutionSummary) *schematype.ExecutionSummary {
	out := &schematype.ExecutionSummary{}
	if a != nil {
		*out = *a
	}
	if b == nil {
		return out
	}
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&out.Decision, b.Decision)
	set(&out.Goal, b.Goal)
	set(&out.Phase, b.Phase)
	set(&out.UserExpressed, b.UserExpressed)
	out.Steps = append(append([]schematype.StepSummary{}, out.Steps...), b.Steps...)
	if b.Curation != nil {
		out.Curation = b.Curation
	}
	if b.BlockedReason != nil {
		out.BlockedReason = b.BlockedReason
	}
	return out
}

// turnEnd says what a change on the open turn does to it.
type turnEnd int

const (
	keepsOpen turnEnd = iota // it stays open
	closes                   // it ends
	// closesClearing ends it and writes nothing before the end's own
	// writes, so the read of the turns clears the turn's state too.
	closesClearing
)

// turnWrite is a change on the session's open turn in progress: its
// caller changes done, a copy of the open turn, in place, then
// commitOpenTurn writes the turn and commits.
type turnWrite struct {
	*store.Tx
	end  turnEnd
	done *ent.Turn
	// older is the turn two before, whose summary a change that closes the
	// turn compresses; cleared is what the read of the turns cleared (see
	// readTurns), nil unless the change ends the turn clearing.
	older   *ent.Turn
	cleared *int
}

// beginOpenTurn locks the session and reads its open turn (with the turn
// two before, when the change closes it), or answers NO_OPEN_TURN. The
// caller ends it with commitOpenTurn, or Rollback.
func beginOpenTurn(ctx context.Context, st *store.Store, sessionID uuid.UUID, end turnEnd) (*turnWrite, error) {
	w, err := st.Begin(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	old := 0
	if end != keepsOpen {
		old = w.Session.CurrentTurn - fullReasoningSummaries
	}
	open, older, cleared, err := readTurns(ctx, w, old, end == closesClearing)
	if err == nil && open == nil {
		err = apperr.New(apperr.NoOpenTurn, "session %s has no open turn: begin one first (%s)", sessionID, apperr.OpBeginTurn)
	}
	if err != nil {
		w.Rollback()
		return nil, err
	}
	done := *open
	return &turnWrite{Tx: w, end: end, done: &done, older: older, cleared: cleared}, nil
}

// commitOpenTurn writes the turn as the change left it, compresses the
// older summary when the turn closes, and commits m.
func (ts *Turns) commitOpenTurn(ctx context.Context, tw *turnWrite, m store.Mutation) (*ent.Turn, error) {
	out, err := saveTurn(tw.Tx, tw.done)
	if err != nil {
		return nil, err
	}
	if tw.end != keepsOpen {
		compressReasoning(tw.Tx, tw.older)
	}
	if _, err := tw.Commit(ctx, m); err != nil {
		return nil, err
	}
	return ts.client.Turn.Adopt(out), nil // committed: later edge reads go through the client
}

// clearTurnState ends what lives only for a turn, as the turn ends well:
// the artifacts saved in it are cleared (their content was kept only for
// linked records), and the enrichment queue is emptied (dropQueue). One
// statement; it returns how many artifacts it cleared.
func clearTurnState(ctx context.Context, w *store.Tx) (int, error) {
	res, err := w.Tx.ExecContext(ctx, `WITH dropped AS (`+dropQueue+`)
		UPDATE artifacts SET status = $2, updated_at = $3 WHERE session_id = $1 AND status = $4`,
		w.Session.ID, artifact.StatusCleared.String(), w.Now, artifact.StatusPromoted.String())
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// dropQueue empties a session's ($1) enrichment queue. The queue is
// transient, like the registry's: it lives for the turn whose reads found
// the unlabelled foreign keys, and later turns rebuild it from their own
// reads. A ref whose label never came keeps its ref and its empty label; a
// read that links it again queues it again. It leaves updated_at alone: a
// ref leaving the queue is not referenced again, and updated_at orders
// references.
const dropQueue = `UPDATE refs SET enrich_table = NULL, enrich_name_column = NULL
	WHERE session_id = $1 AND enrich_table IS NOT NULL`

// saveTurn writes the columns a turn change may set from done, by an update
// on its id (UpdateOne would read the row back), and returns done as the row
// now reads: timestamps in microseconds and the summary as its JSON. The
// update goes with the commit (ExecWithCommit): nothing after it needs its
// answer, and its error is the commit's. It is built with ent's statement
// builder; the values are the engine's own (a status of the enum, counted
// tokens).
func saveTurn(w *store.Tx, done *ent.Turn) (*ent.Turn, error) {
	if done.CompletedAt != nil {
		at := done.CompletedAt.Truncate(time.Microsecond)
		done.CompletedAt = &at
	}
	summary, err := json.Marshal(done.ExecutionSummary)
	if err != nil {
		return nil, err
	}
	var stored *schematype.ExecutionSummary
	if err := json.Unmarshal(summary, &stored); err != nil {
		return nil, err
	}
	done.ExecutionSummary = stored
	u := sql.Dialect(dialect.Postgres).Update(turn.Table).
		Set(turn.FieldStatus, done.Status.String()).
		Set(turn.FieldAssistantMessage, done.AssistantMessage).
		Set(turn.FieldAssistantTokens, done.AssistantTokens).
		Set(turn.FieldAssistantSummary, done.AssistantSummary).
		Set(turn.FieldExecutionSummary, summary)
	if done.CompletedAt != nil {
		u.Set(turn.FieldCompletedAt, *done.CompletedAt)
	}
	query, args := u.Where(sql.And(sql.EQ(turn.FieldID, done.ID), sql.EQ(turn.FieldSessionID, done.SessionID))).Query()
	w.ExecWithCommit(query, args...)
	return done, nil
}

// asStored returns a summary as the jsonb column gives it back, where empty
// lists are left out.
func asStored(s *schematype.ExecutionSummary) (*schematype.ExecutionSummary, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var out *schematype.ExecutionSummary
	return out, json.Unmarshal(b, &out)
}

// openTurn returns the session's current turn when it is still open, and,
// read in the same statement, the turn numbered other when other > 0 and
// it exists.
func openTurn(ctx context.Context, w *store.Tx, other int) (open, otherTurn *ent.Turn, err error) {
	open, otherTurn, _, err = readTurns(ctx, w, other, false)
	return open, otherTurn, err
}

// clearedColumn names the count of artifacts a clearing read cleared.
const clearedColumn = "cleared_artifacts"

// readTurns is openTurn for a write that may end the turn with nothing
// written before: with clear, the same statement clears the turn's state
// as clearTurnState does (one round trip fewer), if it finds the turns,
// and cleared says how many artifacts it cleared. It finds none only when
// the turns are gone (a reset) or there is none yet; then cleared is nil
// and nothing was cleared.
func readTurns(ctx context.Context, w *store.Tx, other int, clear bool) (open, otherTurn *ent.Turn, cleared *int, err error) {
	current := w.Session.CurrentTurn
	if current == 0 {
		return nil, nil, nil, nil
	}
	numbers := []int{current}
	if other > 0 {
		numbers = append(numbers, other)
	}
	q := w.Tx.Turn.Query().Where(turn.SessionID(w.Session.ID), turn.NumberIn(numbers...))
	if clear {
		q.Modify(func(s *sql.Selector) {
			s.Prefix(clearingTurnState(w, numbers))
			s.AppendSelectExprAs(sql.Raw("(SELECT count(*) FROM "+clearedArtifacts+")"), clearedColumn)
		})
	}
	rows, err := q.All(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	for _, t := range rows {
		if clear && cleared == nil {
			v, err := t.Value(clearedColumn)
			if err != nil {
				return nil, nil, nil, err
			}
			n, ok := v.(int64)
			if !ok {
				return nil, nil, nil, fmt.Errorf("%s: got %T", clearedColumn, v)
			}
			cleared = new(int(n))
		}
		switch t.Number {
		case current:
			if t.Status == turn.StatusOpen {
				open = t
			}
		case other:
			otherTurn = t
		}
	}
	return open, otherTurn, cleared, nil
}

// clearedArtifacts names the artifacts clearingTurnState cleared.
const clearedArtifacts = "cleared"

// clearingTurnState prefixes the read of a session's turns (numbers) with
// clearTurnState's two updates, made only if the read finds a turn, so
// that a read that finds none has changed nothing (its caller clears
// then, in a statement of its own).
func clearingTurnState(w *store.Tx, numbers []int) sql.Querier {
	return sql.ExprFunc(func(b *sql.Builder) {
		found := func() {
			b.WriteString(" AND EXISTS (SELECT 1 FROM turns WHERE session_id = ").Arg(w.Session.ID).WriteString(" AND number IN (")
			for i, n := range numbers {
				if i > 0 {
					b.Comma()
				}
				b.Arg(n)
			}
			b.WriteString("))")
		}
		b.WriteString("WITH dropped AS (UPDATE refs SET enrich_table = NULL, enrich_name_column = NULL WHERE session_id = ").
			Arg(w.Session.ID).WriteString(" AND enrich_table IS NOT NULL")
		found()
		b.WriteString("), " + clearedArtifacts + " AS (UPDATE artifacts SET status = ").Arg(artifact.StatusCleared.String()).
			WriteString(", updated_at = ").Arg(w.Now).WriteString(" WHERE session_id = ").Arg(w.Session.ID).
			WriteString(" AND status = ").Arg(artifact.StatusPromoted.String())
		found()
		b.WriteString(" RETURNING 1) ")
	})
}
