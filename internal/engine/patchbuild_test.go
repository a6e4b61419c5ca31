package engine_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent/schema/schematype"
	"sessiongraph/ent/stepresult"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/contextbuild"
	"sessiongraph/internal/engine"
)

var (
	everyNode   = []contextbuild.Node{contextbuild.Understand, contextbuild.Think, contextbuild.Act, contextbuild.Reply, contextbuild.Messages}
	someOptions = func() []*engine.ContextOptions {
		one, small, two, chars, tight := 1, 400, 2, "chars4", 100
		summary := contextbuild.Summary
		return []*engine.ContextOptions{nil, {TurnsWindow: &one, TokenBudget: &small}, {Tokenizer: &chars},
			{Strategy: &summary, KeepRecent: &two}, {ModelLimit: &tight}} // tight: MESSAGES cuts its window turn by turn
	}()
)

// equivalence drives one session through random writes and, after each
// that moved it, compares every node's build with a few option sets, as
// the engine gives it (patched from the one before when it can be) and as
// made from the rows, field for field, counting the builds that were
// patched and those checked.
type equivalence struct {
	t       *testing.T
	s       *apitest.Server
	rng     *rand.Rand
	ctx     context.Context
	id      uuid.UUID
	known   map[string][]uuid.UUID // entity ids read, by table
	genRefs []string
	// promoted are entities created from generated refs: refs with artifacts.
	promoted []uuid.UUID
	patched  int
	checked  int
	byKind   map[string]int
	// last says which builds of the last compare were patched, by node and
	// option set ("THINK/0").
	last map[string]bool
}

func (q *equivalence) e() *engine.Engine { return q.s.Engine }

func (q *equivalence) records(table string, n int, fresh bool) []map[string]any {
	var out []map[string]any
	for range n {
		id := uuid.New()
		if !fresh && len(q.known[table]) > 0 {
			id = q.known[table][q.rng.IntN(len(q.known[table]))]
		} else {
			q.known[table] = append(q.known[table], id)
		}
		r := map[string]any{"id": id.String()}
		switch table {
		case "recipes":
			r["name"] = fmt.Sprintf("Recipe %d", q.rng.IntN(1000))
			r["cuisine"] = []string{"french", "thai", "italian"}[q.rng.IntN(3)]
			if q.rng.IntN(3) == 0 {
				r["instructions"] = "Slice, sweat, bake."
			}
		case "ingredients":
			r["name"] = fmt.Sprintf("Ingredient %d", q.rng.IntN(1000))
		case "meal_plans":
			r["date"], r["meal_type"] = "2026-12-01", "dinner"
			if rs := q.known["recipes"]; len(rs) > 0 && q.rng.IntN(2) == 0 {
				r["recipe_id"] = rs[q.rng.IntN(len(rs))].String()
			} else {
				r["recipe_id"] = uuid.NewString() // a foreign key waiting for its label
			}
		}
		out = append(out, r)
	}
	return out
}

// refs are the session's refs, read by the test past the engine.
func (q *equivalence) refs(where string) []string {
	rows, err := q.s.DB.Query(`SELECT ref FROM refs WHERE session_id = $1 `+where+` ORDER BY ref`, q.id)
	require.NoError(q.t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var r string
		require.NoError(q.t, rows.Scan(&r))
		out = append(out, r)
	}
	require.NoError(q.t, rows.Err())
	return out
}

// someRef is a ref of the session, a generated one (with its artifact)
// half the time.
func (q *equivalence) someRef() string {
	if len(q.genRefs) > 0 && q.rng.IntN(2) == 0 {
		return q.pick(q.genRefs)
	}
	return q.pick(q.refs(""))
}

func (q *equivalence) pick(refs []string) string {
	if len(refs) == 0 {
		return "recipe_1"
	}
	return refs[q.rng.IntN(len(refs))]
}

func (q *equivalence) step() *int {
	if q.rng.IntN(3) > 0 {
		return nil
	}
	n := 1 + q.rng.IntN(4)
	return &n
}

// write makes one random write and names its kind; errors (a write the
// session's state refuses) change nothing and are part of the sequence.
func (q *equivalence) write() string {
	e, ctx, id := q.e(), q.ctx, q.id
	table := []string{"recipes", "ingredients", "meal_plans"}[q.rng.IntN(3)]
	str := func(s string) *string { return &s }
	switch k := q.rng.IntN(26); k {
	case 0, 1, 2:
		_, _ = e.Writes.RecordRead(ctx, engine.RecordReadInput{SessionID: id, Table: &table, Records: q.records(table, 1+q.rng.IntN(3), true), Step: q.step()})
		return "read new"
	case 3, 4, 5:
		_, _ = e.Writes.RecordRead(ctx, engine.RecordReadInput{SessionID: id, Table: &table, Records: q.records(table, 1+q.rng.IntN(3), false), Step: q.step()})
		return "read again"
	case 6:
		_, _ = e.Writes.RecordUpdated(ctx, engine.RecordReadInput{SessionID: id, Table: &table, Records: q.records(table, 1+q.rng.IntN(2), q.rng.IntN(2) == 0), Step: q.step()})
		return "updated"
	case 7:
		// Many refs at once, up to past maxPatchRefs: the window passes the
		// build's 500-ref cap.
		_, _ = e.Writes.RecordRead(ctx, engine.RecordReadInput{SessionID: id, Table: str("ingredients"), Records: q.records("ingredients", []int{40, 150}[q.rng.IntN(2)]+q.rng.IntN(100), true)})
		return "read many"
	case 8:
		r, err := e.Writes.RecordGenerated(ctx, engine.RecordGeneratedInput{SessionID: id, EntityType: "recipe",
			Content: map[string]any{"name": "Leek tart", "servings": 4, "note": "uses " + uuid.NewString()}, Step: q.step()})
		if err == nil {
			q.genRefs = append(q.genRefs, r.Ref)
		}
		return "generated"
	case 9:
		in := engine.RecordCreatedInput{SessionID: id, EntityType: "recipe", EntityID: uuid.New(), Label: str("Leek tart"), Step: q.step()}
		if len(q.genRefs) > 0 && q.rng.IntN(2) == 0 {
			in.GenRef = str(q.pick(q.genRefs))
		}
		if _, err := e.Writes.RecordCreated(ctx, in); err == nil {
			// Read again later: a ref with a saved artifact, touched by a
			// write that stores none.
			q.promoted = append(q.promoted, in.EntityID)
		}
		return "created"
	case 10:
		if ids := q.known["recipes"]; len(ids) > 0 {
			_, _ = e.Writes.RecordDeleted(ctx, engine.RecordDeletedInput{SessionID: id, EntityType: "recipe", EntityIDs: ids[:1], Step: q.step()})
		}
		return "deleted"
	case 11:
		if ids := q.known["ingredients"]; len(ids) > 0 {
			_, _ = e.Writes.RecordUserAction(ctx, engine.RecordUserActionInput{SessionID: id, Kind: "MENTIONED", EntityType: "ingredient", EntityID: ids[q.rng.IntN(len(ids))]})
		}
		return "user action"
	case 12:
		_, _ = e.Writes.MentionEntity(ctx, id, []string{q.someRef()})
		return "mention"
	case 13:
		_, _ = e.Writes.RetainRef(ctx, id, q.someRef(), "kept for the test")
		return "retain"
	case 14:
		_, _ = e.Writes.ReleaseRef(ctx, id, q.pick(q.refs("AND active_reason IS NOT NULL")))
		return "release"
	case 15:
		if len(q.genRefs) > 0 {
			if q.rng.IntN(2) == 0 {
				_, _ = e.Writes.ClearArtifact(ctx, id, q.pick(q.genRefs))
			} else {
				_, _ = e.Writes.UpdateArtifact(ctx, engine.UpdateArtifactInput{SessionID: id, Ref: q.pick(q.genRefs), Content: map[string]any{"name": "Leek tart v2"}})
			}
		}
		return "artifact"
	case 16:
		if queued := q.refs("AND enrich_table IS NOT NULL"); len(queued) > 0 {
			_, _ = e.Writes.ApplyEnrichment(ctx, engine.ApplyEnrichmentInput{SessionID: id, Labels: []*engine.EnrichmentLabel{{Ref: queued[0], Label: "Looked up"}}})
		}
		return "enrichment"
	case 17:
		_, _ = e.Turns.BeginTurn(ctx, id, fmt.Sprintf("what can I cook with leeks? (%d)", q.rng.IntN(100)))
		return "begin turn"
	case 18:
		var sum *schematype.ExecutionSummary
		if q.rng.IntN(2) == 0 {
			sum = &schematype.ExecutionSummary{Decision: "answer", Goal: "a dinner",
				Curation: &schematype.Curation{Retained: []schematype.RetainedRef{{Ref: q.pick(q.refs("")), Reason: "liked"}}}}
		}
		_, _ = e.Turns.EndTurn(ctx, engine.EndTurnInput{SessionID: id, AssistantMessage: "A leek gratin, or a soup.", Summary: sum})
		return "end turn"
	case 19:
		if q.rng.IntN(4) == 0 {
			_, _ = e.Turns.FailTurn(ctx, id, "the model timed out")
			return "fail turn"
		}
		if q.rng.IntN(4) == 0 {
			_, _ = e.Turns.ResetConversation(ctx, id, q.rng.IntN(2) == 0)
			return "reset"
		}
		_, _ = e.Writes.RecordStepResult(ctx, engine.RecordStepResultInput{SessionID: id, Step: 1 + q.rng.IntN(4), Kind: stepresult.KindAnalyze,
			Description: str("compared the recipes"), Data: []any{map[string]any{"best": q.pick(q.refs(""))}}})
		return "step result"
	case 20:
		in := engine.UpdateSessionInput{ID: id}
		switch q.rng.IntN(5) {
		case 0:
			in.HistorySummary, in.ReasoningSummary = str("Compressed: leeks, gratins."), str("Earlier: chose french.")
		case 1:
			in.EngagementSummary = str(fmt.Sprintf("Cooking with leeks (%d)", q.rng.IntN(100)))
		case 2:
			in.PendingClarification = map[string]any{"question": "for how many?"}
		case 3:
			ttl := 3600 + q.rng.IntN(3600)
			in.TTLSeconds = &ttl
		case 4:
			in.SystemPrompt = str("You are a cook.")
		}
		_, _ = e.Sessions.UpdateSession(ctx, in)
		return "update session"
	case 21:
		if len(q.promoted) > 0 {
			rec := map[string]any{"id": q.promoted[q.rng.IntN(len(q.promoted))].String(), "name": "Leek tart", "cuisine": "french"}
			_, _ = e.Writes.RecordRead(ctx, engine.RecordReadInput{SessionID: id, Table: str("recipes"), Records: []map[string]any{rec}})
			return "read saved"
		}
		_, _ = e.Writes.RecordRead(ctx, engine.RecordReadInput{SessionID: id, Table: &table, Records: q.records(table, 1, false)})
		return "read again"
	case 22, 23:
		_, _ = e.Turns.BeginTurn(ctx, id, fmt.Sprintf("and for dessert? (%d)", q.rng.IntN(100)))
		return "begin turn"
	default:
		_, _ = e.Turns.EndTurn(ctx, engine.EndTurnInput{SessionID: id, AssistantMessage: "A tart."})
		return "end turn"
	}
}

// compare checks every node's build at the session's state.
func (q *equivalence) compare(kind string) {
	sess, err := q.e().Sessions.Session(q.ctx, q.id)
	require.NoError(q.t, err)
	q.last = map[string]bool{}
	for _, node := range everyNode {
		for i, o := range someOptions {
			if node != contextbuild.Messages {
				typed, byEnt, err := q.e().Builds.EntriesBothWays(q.ctx, sess, node, o)
				require.NoError(q.t, err)
				require.Equal(q.t, byEnt, typed, "%s refs with options %d after %q", node, i, kind)
			}
			typed, byEnt, err := q.e().Builds.TurnsBothWays(q.ctx, sess, node, o)
			require.NoError(q.t, err)
			require.Equal(q.t, byEnt, typed, "%s turns with options %d after %q", node, i, kind)
			before := q.e().Builds.PatchedBuilds()
			got, err := q.e().Builds.Context(q.ctx, sess, node, o)
			require.NoError(q.t, err)
			patched := q.e().Builds.PatchedBuilds() > before
			if patched {
				q.patched++
				q.byKind[kind]++
			}
			q.last[fmt.Sprintf("%s/%d", node, i)] = patched
			want, err := q.e().Builds.ContextUncached(q.ctx, sess, node, o)
			require.NoError(q.t, err)
			require.Equal(q.t, want, got, "%s build with options %d after %q at sequence %d", node, i, kind, sess.EventSequence)
			q.checked++
		}
	}
}

// After every kind of write, the build the engine gives (patched from the
// build before the write when the write changed refs alone, known exactly)
// is the build made from the rows, byte for byte, for every node and a few
// option sets: text, sections, tiers, messages, notes and counts.
func TestAPatchedBuildIsTheBuildMadeFromTheRows(t *testing.T) {
	s := apitest.New(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	ctx := access.System(context.Background())
	total, patched := 0, 0
	kinds := map[string]int{}
	for n := range 3 {
		q := &equivalence{t: t, s: s, rng: rand.New(rand.NewPCG(seed, uint64(n))), ctx: ctx,
			known: map[string][]uuid.UUID{}, byKind: kinds}
		opened, err := s.Engine.Sessions.OpenSession(ctx, engine.OpenSessionInput{Tenant: "acme", ExternalKey: fmt.Sprintf("patch-%d-%d", seed, n)})
		require.NoError(t, err)
		q.id = opened.Session.ID
		_, err = s.Engine.Turns.BeginTurn(ctx, q.id, "hello")
		require.NoError(t, err)
		q.compare("begin")
		for range 90 {
			before, err := s.Engine.Sessions.Session(ctx, q.id)
			require.NoError(t, err)
			kind := q.write()
			after, err := s.Engine.Sessions.Session(ctx, q.id)
			require.NoError(t, err)
			if after.EventSequence == before.EventSequence {
				continue // refused: nothing changed
			}
			q.compare(kind)
		}
		total, patched = total+q.checked, patched+q.patched
	}
	t.Logf("%d builds compared, %d patched; patched after: %v", total, patched, kinds)
	require.Greater(t, patched, total/5, "the writes that change refs alone are most of the sequence")
	for _, k := range []string{"read new", "read again", "read saved", "updated", "mention", "retain"} {
		require.Positive(t, kinds[k], "a build after %q was patched", k)
	}
}
