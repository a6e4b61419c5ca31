package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/contextbuild"
	"sessiongraph/internal/engine"
)

// fidelitySession opens a session in the kitchen domain with an open turn.
func fidelitySession(t *testing.T, s *apitest.Server, key string) (context.Context, uuid.UUID) {
	t.Helper()
	ctx := access.System(context.Background())
	opened, err := s.Engine.Sessions.OpenSession(ctx, engine.OpenSessionInput{Tenant: "acme", ExternalKey: key})
	require.NoError(t, err)
	_, err = s.Engine.Turns.BeginTurn(ctx, opened.Session.ID, "suggest a curry")
	require.NoError(t, err)
	return ctx, opened.Session.ID
}

func build(t *testing.T, s *apitest.Server, ctx context.Context, id uuid.UUID, node contextbuild.Node, opts *engine.ContextOptions) *engine.ContextBuild {
	t.Helper()
	sess, err := s.Engine.Sessions.Session(ctx, id)
	require.NoError(t, err)
	b, err := s.Engine.Builds.Context(ctx, sess, node, opts)
	require.NoError(t, err)
	return b
}

func refsOf(rows []*ent.Ref) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.Ref
	}
	return out
}

// TestAClearedUnsavedArtifactLeavesTheGeneratedTierInEveryBuild: content
// generated and then cleared without being saved is no longer pending, so
// every build and every API places its ref in the same tier: the generated
// tier holds only refs whose artifact still waits to be saved.
func TestAClearedUnsavedArtifactLeavesTheGeneratedTierInEveryBuild(t *testing.T) {
	s := apitest.New(t)
	ctx, id := fidelitySession(t, s, "cleared-unsaved")
	kept, err := s.Engine.Writes.RecordGenerated(ctx, engine.RecordGeneratedInput{SessionID: id, EntityType: "recipe",
		Content: map[string]any{"name": "Chana masala", "ingredients": []any{"chickpeas"}, "instructions": "Simmer."}})
	require.NoError(t, err)
	dropped, err := s.Engine.Writes.RecordGenerated(ctx, engine.RecordGeneratedInput{SessionID: id, EntityType: "recipe",
		Content: map[string]any{"name": "Aloo gobi", "ingredients": []any{"potato"}, "instructions": "Roast."}})
	require.NoError(t, err)
	_, err = s.Engine.Writes.ClearArtifact(ctx, id, dropped.Ref)
	require.NoError(t, err)

	sess, err := s.Engine.Sessions.Session(ctx, id)
	require.NoError(t, err)
	tiers, err := s.Engine.Reads.ActiveEntities(ctx, sess, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{kept.Ref}, refsOf(tiers.Generated), "activeEntities")
	assert.Contains(t, refsOf(tiers.Active), dropped.Ref, "referenced this turn, so active")

	for _, node := range []contextbuild.Node{contextbuild.Understand, contextbuild.Think, contextbuild.Act, contextbuild.Reply} {
		b := build(t, s, ctx, id, node, nil)
		assert.Equal(t, []string{kept.Ref}, b.Tiers.Generated, "%s's generated tier", node)
		assert.Contains(t, b.Tiers.Active, dropped.Ref, "%s's active tier", node)
	}
	think := build(t, s, ctx, id, contextbuild.Think, nil)
	assert.Contains(t, think.Text, "`"+kept.Ref+"`: Chana masala (recipe) [unsaved]")
	assert.NotContains(t, think.Text, "`"+dropped.Ref+"`: Aloo gobi (recipe) [unsaved]")

	resolved, err := s.Engine.Reads.ResolveRefs(ctx, sess, []string{kept.Ref, dropped.Ref})
	require.NoError(t, err)
	assert.True(t, resolved[0].Pending, "%s still waits to be saved", kept.Ref)
	assert.False(t, resolved[1].Pending, "%s was cleared unsaved: nothing waits", dropped.Ref)
}

// TestUpdatingAClearedArtifactAnswersArtifactCleared: the code the error
// table gives for a change to cleared content.
func TestUpdatingAClearedArtifactAnswersArtifactCleared(t *testing.T) {
	s := apitest.New(t)
	ctx, id := fidelitySession(t, s, "update-cleared")
	gen, err := s.Engine.Writes.RecordGenerated(ctx, engine.RecordGeneratedInput{SessionID: id, EntityType: "recipe",
		Content: map[string]any{"name": "Dal", "ingredients": []any{"dal"}, "instructions": "Simmer."}})
	require.NoError(t, err)
	_, err = s.Engine.Writes.ClearArtifact(ctx, id, gen.Ref)
	require.NoError(t, err)
	_, err = s.Engine.Writes.UpdateArtifact(ctx, engine.UpdateArtifactInput{SessionID: id, Ref: gen.Ref,
		Content: map[string]any{"name": "Tadka dal", "ingredients": []any{"dal"}, "instructions": "Temper."}})
	assert.Equal(t, apperr.ArtifactCleared, apperr.CodeOf(err), "%v", err)
}

// TestThinkOpensWithTheEngagementSummaryAndEndsWithTheHistorySummary: the
// condensed context's order: the engagement summary first, the history
// summary last and only while room is left.
func TestThinkOpensWithTheEngagementSummaryAndEndsWithTheHistorySummary(t *testing.T) {
	s := apitest.New(t)
	ctx, id := fidelitySession(t, s, "think-summaries")
	engagement := "Weekly meal planning for a vegetarian family"
	history := "Earlier the user asked for quick dinners and no mushrooms." + strings.Repeat(" They liked the dal.", 40)
	_, err := s.Engine.Sessions.UpdateSession(ctx, engine.UpdateSessionInput{ID: id, EngagementSummary: &engagement, HistorySummary: &history})
	require.NoError(t, err)

	b := build(t, s, ctx, id, contextbuild.Think, nil)
	require.NotEmpty(t, b.Sections)
	assert.Equal(t, "engagement_summary", b.Sections[0].Name)
	assert.Equal(t, "history_summary", b.Sections[len(b.Sections)-1].Name)
	assert.True(t, strings.HasPrefix(b.Text, "## Session\n"+engagement+"\n"), b.Text)
	assert.Contains(t, b.Text, "## History summary\n"+history)

	// With little room, the history summary is what gives way.
	tight := 60
	small := build(t, s, ctx, id, contextbuild.Think, &engine.ContextOptions{TokenBudget: &tight})
	assert.Contains(t, small.Text, engagement)
	assert.NotContains(t, small.Text, history)
}

// TestTheEnrichmentQueueLivesForItsTurn: a foreign key read without its
// label waits in the enrichment queue for the rest of its turn; the next
// turn starts with an empty queue, and its own reads fill it again.
func TestTheEnrichmentQueueLivesForItsTurn(t *testing.T) {
	s := apitest.New(t)
	ctx, id := fidelitySession(t, s, "enrichment-turn")
	read := func() *engine.RecordsResult {
		r, err := s.Engine.Writes.RecordRead(ctx, engine.RecordReadInput{SessionID: id, Table: new("meal_plans"), Records: []map[string]any{
			{"id": uuid.NewString(), "date": "2026-01-12", "meal_type": "dinner", "recipe_id": uuid.NewString()},
		}})
		require.NoError(t, err)
		return r
	}
	queue := func() []string {
		sess, err := s.Engine.Sessions.Session(ctx, id)
		require.NoError(t, err)
		q, err := s.Engine.Reads.EnrichmentQueue(ctx, sess)
		require.NoError(t, err)
		var refs []string
		for _, r := range q {
			refs = append(refs, r.Ref)
		}
		return refs
	}
	first := read()
	require.Len(t, first.EnrichmentQueue, 1)
	waiting := first.EnrichmentQueue[0].Ref
	assert.Equal(t, []string{waiting}, queue(), "queued for the rest of the turn")

	_, err := s.Engine.Turns.EndTurn(ctx, engine.EndTurnInput{SessionID: id, AssistantMessage: "Here is your plan."})
	require.NoError(t, err)
	assert.Empty(t, queue(), "the turn that read it is over")
	_, err = s.Engine.Turns.BeginTurn(ctx, id, "and tomorrow?")
	require.NoError(t, err)
	assert.Empty(t, queue())
	refs, err := s.Engine.Reads.RefsByName(ctx, id, []string{waiting})
	require.NoError(t, err)
	require.Len(t, refs, 1, "the ref itself stays")
	assert.Equal(t, "", refs[0].Label)
	assert.Nil(t, refs[0].EnrichTable)

	second := read()
	assert.Len(t, second.EnrichmentQueue, 1, "this turn's read queues its own")
	assert.Len(t, queue(), 1)

	// A failed turn ends the queue as well.
	_, err = s.Engine.Turns.FailTurn(ctx, id, "the model timed out")
	require.NoError(t, err)
	assert.Empty(t, queue())
}

// TestWorkingMemoryKeepsTheLastTwentyReferencedInOrderOfReference: more
// than twenty entities in one write keep the last twenty referenced, newest
// first, however their refs sort as text (recipe_10 before recipe_2).
func TestWorkingMemoryKeepsTheLastTwentyReferencedInOrderOfReference(t *testing.T) {
	s := apitest.New(t)
	ctx, id := fidelitySession(t, s, "last-twenty")
	var records []map[string]any
	for i := 1; i <= 25; i++ {
		records = append(records, map[string]any{"id": uuid.NewString(), "name": fmt.Sprintf("Recipe %02d", i)})
	}
	read, err := s.Engine.Writes.RecordRead(ctx, engine.RecordReadInput{SessionID: id, Table: new("recipes"), Records: records})
	require.NoError(t, err)
	require.Len(t, read.Refs, 25)

	sess, err := s.Engine.Sessions.Session(ctx, id)
	require.NoError(t, err)
	memory, err := s.Engine.Reads.WorkingMemory(ctx, sess, 5)
	require.NoError(t, err)
	var got, want []string
	for _, e := range memory.RecentEntities {
		got = append(got, e.Label)
	}
	for i := 25; i > 5; i-- {
		want = append(want, fmt.Sprintf("Recipe %02d", i))
	}
	assert.Equal(t, want, got)
}

// TestAFactIsTracedThroughTheRecordedPrompts: the user's allergy is in
// THINK's prompt while its turn is among the last two shown, and the trace
// names the first build that lost it and the one before, which held it.
func TestAFactIsTracedThroughTheRecordedPrompts(t *testing.T) {
	s := apitest.New(t)
	ctx := access.System(context.Background())
	opened, err := s.Engine.Sessions.OpenSession(ctx, engine.OpenSessionInput{Tenant: "acme", ExternalKey: "peanut"})
	require.NoError(t, err)
	id := opened.Session.ID
	messages := []string{"I have a peanut allergy; plan my dinners", "something with rice", "and a dessert", "what about Friday?"}
	var receipts []uuid.UUID
	for _, m := range messages {
		_, err := s.Engine.Turns.BeginTurn(ctx, id, m)
		require.NoError(t, err)
		r, err := s.Engine.Builds.RecordContext(ctx, engine.RecordContextInput{SessionID: id, Node: contextbuild.Think})
		require.NoError(t, err)
		receipts = append(receipts, r.Receipt.ID)
		_, err = s.Engine.Turns.EndTurn(ctx, engine.EndTurnInput{SessionID: id, AssistantMessage: "Noted."})
		require.NoError(t, err)
	}
	sess, err := s.Engine.Sessions.Session(ctx, id)
	require.NoError(t, err)

	trace, err := s.Engine.Receipts.TraceFact(ctx, sess, engine.Fact{Text: "Peanut Allergy"}, nil)
	require.NoError(t, err)
	var held []bool
	for _, r := range trace.Receipts {
		require.NotNil(t, r.Held)
		held = append(held, *r.Held)
	}
	// THINK shows the current message and the two turns before it.
	assert.Equal(t, []bool{true, true, true, false}, held)
	require.NotNil(t, trace.FirstLoss)
	assert.Equal(t, receipts[2], trace.FirstLoss.HeldIn.ID)
	assert.Equal(t, receipts[3], trace.FirstLoss.LostIn.ID)
	assert.Equal(t, 4, trace.FirstLoss.LostIn.Turn)

	never, err := s.Engine.Receipts.TraceFact(ctx, sess, engine.Fact{Text: "shellfish"}, nil)
	require.NoError(t, err)
	assert.Nil(t, never.FirstLoss, "a fact never held is never lost")

	// Across sessions: only the sessions whose THINK prompts held it.
	other, err := s.Engine.Sessions.OpenSession(ctx, engine.OpenSessionInput{Tenant: "acme", ExternalKey: "no-peanut"})
	require.NoError(t, err)
	_, err = s.Engine.Turns.BeginTurn(ctx, other.Session.ID, "plan lunches")
	require.NoError(t, err)
	_, err = s.Engine.Builds.RecordContext(ctx, engine.RecordContextInput{SessionID: other.Session.ID, Node: contextbuild.Think})
	require.NoError(t, err)
	found, err := s.Engine.Receipts.SearchFact(ctx, engine.Fact{Text: "peanut"}, contextbuild.Think, nil)
	require.NoError(t, err)
	assert.Equal(t, []uuid.UUID{id}, found.SessionIDs)
	assert.Equal(t, 5, found.Scanned)
	assert.Nil(t, found.Next, "every receipt was read")

	_, err = s.Engine.Receipts.TraceFact(ctx, sess, engine.Fact{}, nil)
	assert.Equal(t, apperr.BadUserInput, apperr.CodeOf(err))
}

// TestARefIsTracedByItsTiers: a ref is held while a build lists it in a
// tier, even when the receipt kept only its text's hash.
func TestARefIsTracedByItsTiers(t *testing.T) {
	s := apitest.New(t, func(c *app.Config) { c.ReceiptHashOnly = true })
	ctx := access.System(context.Background())
	opened, err := s.Engine.Sessions.OpenSession(ctx, engine.OpenSessionInput{Tenant: "acme", ExternalKey: "ref-trace"})
	require.NoError(t, err)
	id := opened.Session.ID
	var ref string
	for turn := 1; turn <= 4; turn++ {
		_, err := s.Engine.Turns.BeginTurn(ctx, id, "next")
		require.NoError(t, err)
		if turn == 1 {
			read, err := s.Engine.Writes.RecordRead(ctx, engine.RecordReadInput{SessionID: id, Table: new("recipes"),
				Records: []map[string]any{{"id": uuid.NewString(), "name": "Peanut noodles"}}})
			require.NoError(t, err)
			ref = read.Refs[0]
		}
		_, err = s.Engine.Builds.RecordContext(ctx, engine.RecordContextInput{SessionID: id, Node: contextbuild.Think})
		require.NoError(t, err)
		_, err = s.Engine.Turns.EndTurn(ctx, engine.EndTurnInput{SessionID: id, AssistantMessage: "Noted."})
		require.NoError(t, err)
	}
	sess, err := s.Engine.Sessions.Session(ctx, id)
	require.NoError(t, err)
	trace, err := s.Engine.Receipts.TraceFact(ctx, sess, engine.Fact{Ref: ref}, []contextbuild.Node{contextbuild.Think})
	require.NoError(t, err)
	var held []*bool
	for _, r := range trace.Receipts {
		held = append(held, r.Held)
	}
	yes := true
	assert.Equal(t, []*bool{&yes, &yes, nil, nil}, held, "listed while active; then only the text could tell, and it was not kept")
	assert.Nil(t, trace.FirstLoss, "an unknown is not a loss")

	text, err := s.Engine.Receipts.TraceFact(ctx, sess, engine.Fact{Text: "noodles"}, nil)
	require.NoError(t, err)
	for _, r := range text.Receipts {
		assert.Nil(t, r.Held, "no text was kept")
	}
}
