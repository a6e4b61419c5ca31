package graph_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/contextbuild"
	"sessiongraph/internal/engine"
)

// patchSession opens a session with two turns of recipe reads and begins a
// third, as the agent's loop finds it.
func patchSession(t *testing.T, s *apitest.Server, key string) uuid.UUID {
	ctx := access.System(context.Background())
	opened, err := s.Engine.Sessions.OpenSession(ctx, engine.OpenSessionInput{Tenant: "acme", ExternalKey: key})
	require.NoError(t, err)
	id := opened.Session.ID
	for turn := 1; turn <= 3; turn++ {
		_, err := s.Engine.Turns.BeginTurn(ctx, id, fmt.Sprintf("turn %d: what can I cook with leeks?", turn))
		require.NoError(t, err)
		if turn == 3 {
			break
		}
		readRecipes(t, s, id, "Recipe", 5)
		_, err = s.Engine.Turns.EndTurn(ctx, engine.EndTurnInput{SessionID: id, AssistantMessage: "A gratin."})
		require.NoError(t, err)
	}
	return id
}

// readRecipes records a read of n new recipes named after name, and
// returns the session as the write left it.
func readRecipes(t *testing.T, s *apitest.Server, id uuid.UUID, name string, n int) *ent.Session {
	table := "recipes"
	var records []map[string]any
	for i := range n {
		records = append(records, map[string]any{"id": uuid.NewString(), "name": fmt.Sprintf("%s %d", name, i), "cuisine": "french"})
	}
	out, err := s.Engine.Writes.RecordRead(access.System(context.Background()), engine.RecordReadInput{SessionID: id, Table: &table, Records: records})
	require.NoError(t, err)
	return out.Session
}

// built is a THINK build at s and the statements it cost.
func built(t *testing.T, srv *apitest.Server, s *ent.Session) (*engine.ContextBuild, int64) {
	before := srv.Statements()
	b, err := srv.Engine.Builds.Context(access.System(context.Background()), s, contextbuild.Think, nil)
	require.NoError(t, err)
	return b, srv.Statements() - before
}

// The build after a read this replica made is the build before it,
// patched with the read's refs as its upsert stored them: it reads
// nothing, whether asked by the engine or in the write's answer (the
// write with its build costs the write's statements alone), and it is the
// build another replica makes of the same state from the rows.
func TestABuildAfterAReadIsPatchedWithNoRead(t *testing.T) {
	s := apitest.New(t)
	other := apitest.Replica(t, s.DSN)
	id := patchSession(t, s, "patched")
	sess, err := s.Engine.Sessions.Session(access.System(context.Background()), id)
	require.NoError(t, err)
	_, cost := built(t, s, sess)
	require.Positive(t, cost, "the first build reads the rows")

	for i := range 3 {
		after := readRecipes(t, s, id, fmt.Sprintf("Leek soup %d.", i), 2)
		b, cost := built(t, s, after)
		assert.Zero(t, cost, "the build after read %d reads nothing", i)
		assert.Contains(t, b.Text, fmt.Sprintf("Leek soup %d. 1", i))
		fromRows, cost := built(t, other, after)
		assert.Positive(t, cost, "the other replica builds from the rows")
		assert.Equal(t, fromRows, b)
	}

	// In the write's answer: the write with its build costs what the write
	// alone does.
	h := handlerClient{s: s}
	read := func(query string) int64 {
		before := s.Statements()
		h.post(t, query, map[string]any{"id": id.String(), "records": []any{
			map[string]any{"id": uuid.NewString(), "name": "Leek tart", "cuisine": "french"}}})
		return s.Statements() - before
	}
	h.post(t, loopThink, map[string]any{"id": id.String()})
	alone := read(loopRead)
	h.post(t, loopThink, map[string]any{"id": id.String()})
	assert.Equal(t, alone, read(loopReadThink), "the build in the answer reads nothing")
}

// A write by another replica is never patched over: this replica knows
// nothing of what it changed, so its next build reads the rows and shows
// the other's write; a later write of its own after that gap patches from
// the build it made from the rows, and one whose sequence follows another
// replica's write is made from the rows again.
func TestAWriteByAnotherReplicaIsNeverPatchedOver(t *testing.T) {
	s := apitest.New(t)
	other, rows := apitest.Replica(t, s.DSN), apitest.Replica(t, s.DSN)
	id := patchSession(t, s, "replicas")
	sess, err := s.Engine.Sessions.Session(access.System(context.Background()), id)
	require.NoError(t, err)
	built(t, s, sess)

	check := func(after *ent.Session, name string, patched bool) {
		t.Helper()
		b, cost := built(t, s, after)
		if patched {
			assert.Zero(t, cost, "after %s: patched", name)
		} else {
			assert.Positive(t, cost, "after %s: made from the rows", name)
		}
		assert.Contains(t, b.Text, name)
		fromRows, cost := built(t, rows, after)
		assert.Positive(t, cost, "a replica that never writes builds from the rows")
		assert.Equal(t, fromRows, b)
	}
	check(readRecipes(t, other, id, "Other's gratin", 1), "Other's gratin", false)
	check(readRecipes(t, s, id, "Own soup", 1), "Own soup", true)
	// The other's write, then one of this replica's, before any build: the
	// sequence has a write this replica knows nothing of.
	readRecipes(t, other, id, "Other's tart", 1)
	after := readRecipes(t, s, id, "Own tart", 1)
	check(after, "Own tart", false)
	b, _ := built(t, s, after)
	assert.Contains(t, b.Text, "Other's tart")
}
