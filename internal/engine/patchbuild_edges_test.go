package engine_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/contextbuild"
	"sessiongraph/internal/engine"
)

// At the edges of what a write knows, the builds are still the builds made
// from the rows, and the ones that cannot be patched are made from the
// rows: a mention of a generated ref (its artifact kept from the build
// before, which ACT shows), a read of a saved entity whose ref left the
// window (its artifact is not known to the read: made from the rows), a
// retained ref released out of the window (it leaves the build), and a
// session past the build's 500-ref cap, where a ref leaving lets another in
// (made from the rows), and a write of more than 100 refs (not a small
// write: made from the rows).
func TestPatchedBuildsAtTheEdgesOfWhatAWriteKnows(t *testing.T) {
	s := apitest.New(t)
	ctx := access.System(context.Background())
	q := &equivalence{t: t, s: s, rng: rand.New(rand.NewPCG(1, 2)), ctx: ctx, known: map[string][]uuid.UUID{}, byKind: map[string]int{}}
	opened, err := s.Engine.Sessions.OpenSession(ctx, engine.OpenSessionInput{Tenant: "acme", ExternalKey: "edges"})
	require.NoError(t, err)
	q.id = opened.Session.ID
	recipes, ingredients := "recipes", "ingredients"
	// step makes one write and compares every build after it; patched says
	// whether THINK's and ACT's default builds are patched.
	step := func(name string, patched bool, write func() error) {
		t.Helper()
		require.NoError(t, write(), name)
		q.compare(name)
		for _, node := range []contextbuild.Node{contextbuild.Think, contextbuild.Act} {
			require.Equal(t, patched, q.last[string(node)+"/0"], "%s: %s patched", name, node)
		}
	}
	read := func(table string, records ...map[string]any) func() error {
		return func() error {
			_, err := s.Engine.Writes.RecordRead(ctx, engine.RecordReadInput{SessionID: q.id, Table: &table, Records: records})
			return err
		}
	}
	turn := func() error {
		if _, err := s.Engine.Turns.EndTurn(ctx, engine.EndTurnInput{SessionID: q.id, AssistantMessage: "A gratin."}); err != nil {
			return err
		}
		_, err := s.Engine.Turns.BeginTurn(ctx, q.id, "and then?")
		return err
	}
	retain := func(ref string) func() error {
		return func() error { _, err := s.Engine.Writes.RetainRef(ctx, q.id, ref, "liked"); return err }
	}
	release := func(ref string) func() error {
		return func() error { _, err := s.Engine.Writes.ReleaseRef(ctx, q.id, ref); return err }
	}

	a, b, c, saved := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	_, err = s.Engine.Turns.BeginTurn(ctx, q.id, "what can I cook?")
	require.NoError(t, err)
	q.compare("begin")
	step("read three recipes", true, read(recipes, map[string]any{"id": a.String(), "name": "Gratin"},
		map[string]any{"id": b.String(), "name": "Soup"}, map[string]any{"id": c.String(), "name": "Tart"}))
	var gen string
	step("generate, naming a recipe", false, func() error {
		r, err := s.Engine.Writes.RecordGenerated(ctx, engine.RecordGeneratedInput{SessionID: q.id, EntityType: "recipe",
			Content: map[string]any{"name": "Leek tart", "after": a.String(), "unknown": uuid.NewString()}})
		if err == nil {
			gen = r.Ref
		}
		return err
	})
	step("mention the generated ref", true, func() error { _, err := s.Engine.Writes.MentionEntity(ctx, q.id, []string{gen}); return err })
	step("retain it", true, retain(gen))
	step("save it", false, func() error {
		_, err := s.Engine.Writes.RecordCreated(ctx, engine.RecordCreatedInput{SessionID: q.id, EntityType: "recipe", EntityID: saved, GenRef: &gen})
		return err
	})
	for _, ref := range []string{"recipe_1", "recipe_2", "recipe_3"} {
		step("retain "+ref, true, retain(ref))
	}
	step("release the saved one", true, release(gen))
	for range 3 {
		step("a turn", false, turn)
	}
	step("read the saved entity again, out of the window", false, read(recipes, map[string]any{"id": saved.String(), "name": "Leek tart"}))
	step("release recipe_3, out of the window", true, release("recipe_3"))
	step("retain it again: back in the window, its artifact unknown to the write", false, retain("recipe_3"))

	// Fill the window to two refs past the cap: the last two retained
	// recipes (the oldest referenced, recipe_2 and recipe_3) are the ones
	// left out.
	sess, err := s.Engine.Sessions.Session(ctx, q.id)
	require.NoError(t, err)
	var live int
	require.NoError(t, s.DB.QueryRow(`SELECT count(*) FROM refs WHERE session_id = $1 AND (turn_last_referenced >= $2
		OR entity_id IS NULL OR active_reason IS NOT NULL)`, q.id, sess.CurrentTurn-1).Scan(&live))
	// In writes of at most maxPatchRefs (100) refs, each patched: the
	// last one's patch is cut at the cap.
	for n := 502 - live; n > 0; n -= 100 {
		step("read towards two past the cap", true, read(ingredients, q.records(ingredients, min(n, 100), true)...))
	}
	retained := func() []string {
		sess, err := s.Engine.Sessions.Session(ctx, q.id)
		require.NoError(t, err)
		b, err := s.Engine.Builds.Context(ctx, sess, contextbuild.Think, nil)
		require.NoError(t, err)
		return b.Tiers.Retained
	}
	require.NotContains(t, retained(), "recipe_2", "past the cap")
	step("release recipe_1, within the cap: recipe_2 comes in", false, release("recipe_1"))
	require.Contains(t, retained(), "recipe_2")
	step("a read past the cap", false, read(ingredients, q.records(ingredients, 1, true)...))

	// A write of more refs than maxPatchRefs is not remembered, even with
	// room under the cap: a new session, past its first build.
	opened, err = s.Engine.Sessions.OpenSession(ctx, engine.OpenSessionInput{Tenant: "acme", ExternalKey: "edges-large"})
	require.NoError(t, err)
	q.id = opened.Session.ID
	_, err = s.Engine.Turns.BeginTurn(ctx, q.id, "what can I cook?")
	require.NoError(t, err)
	q.compare("begin")
	step("read of 100 refs", true, read(ingredients, q.records(ingredients, 100, true)...))
	step("read of 101 refs", false, read(ingredients, q.records(ingredients, 101, true)...))
}
