package engine_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent"
	"sessiongraph/ent/schema/schematype"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/engine"
)

// refAsRead and turnAsRead put a row's timestamps in UTC: the driver reads
// them in the local zone, the engine builds them in UTC; only the instant
// matters (and it is compared to the nanosecond).
func refAsRead(r *ent.Ref) *ent.Ref {
	c := *r
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return &c
}

// TestStoredRefsAreTheRowsAsRead: the refs a write hands its payload, in
// place of reading them back, are the rows a read returns, through a read
// with FK enrichment, generation, promotion, retention and its release
// (which clears a column).
func TestStoredRefsAreTheRowsAsRead(t *testing.T) {
	s := apitest.New(t)
	ctx := access.System(context.Background())
	opened, err := s.Engine.Sessions.OpenSession(ctx, engine.OpenSessionInput{Tenant: "acme", ExternalKey: "stored"})
	require.NoError(t, err)
	id := opened.Session.ID
	_, err = s.Engine.Turns.BeginTurn(ctx, id, "plan my week")
	require.NoError(t, err)

	same := func(names []string, stored engine.Stored) {
		t.Helper()
		read, err := s.Engine.Reads.RefsByName(ctx, id, names)
		require.NoError(t, err)
		require.Len(t, read, len(names))
		for _, want := range read {
			got := stored[want.Ref]
			require.NotNil(t, got, "the write stored %s", want.Ref)
			assert.Equal(t, asJSON(t, refAsRead(want)), asJSON(t, refAsRead(got)), want.Ref)
		}
		fromPayload, err := s.Engine.Reads.StoredRefs(ctx, id, names, stored)
		require.NoError(t, err)
		assert.Equal(t, names, refNames(fromPayload), "in the order named")
	}

	read, err := s.Engine.Writes.RecordRead(ctx, engine.RecordReadInput{SessionID: id, Table: new("meal_plans"), Records: []map[string]any{
		{"id": uuid.NewString(), "date": "2026-01-12", "meal_type": "dinner", "recipe_id": uuid.NewString()},
	}})
	require.NoError(t, err)
	require.NotEmpty(t, read.EnrichmentQueue, "the FK target waits for a label")
	same(read.Refs, read.Stored)

	gen, err := s.Engine.Writes.RecordGenerated(ctx, engine.RecordGeneratedInput{SessionID: id, EntityType: "recipe",
		Content: map[string]any{"name": "Dal", "ingredients": []any{"dal"}, "instructions": "Simmer."}})
	require.NoError(t, err)
	same([]string{gen.Ref}, gen.Stored)

	// The revision reads the artifact joined into its ref's row.
	first, err := s.Client.Artifact.Query().Only(ctx)
	require.NoError(t, err)
	revised, err := s.Engine.Writes.UpdateArtifact(ctx, engine.UpdateArtifactInput{SessionID: id, Ref: gen.Ref,
		Content: map[string]any{"name": "Tadka dal", "ingredients": []any{"dal", "ghee"}, "instructions": "Simmer, then temper."}})
	require.NoError(t, err)
	same([]string{gen.Ref}, revised.Stored)
	second, err := s.Client.Artifact.Query().Only(ctx)
	require.NoError(t, err)
	assert.Equal(t, first.Revision+1, second.Revision)
	assert.Equal(t, first.ID, second.ID)
	assert.True(t, first.CreatedAt.Equal(second.CreatedAt))
	assert.Equal(t, "Tadka dal", second.Label)

	created, err := s.Engine.Writes.RecordCreated(ctx, engine.RecordCreatedInput{SessionID: id, EntityType: "recipe",
		EntityID: uuid.New(), GenRef: &gen.Ref})
	require.NoError(t, err)
	require.True(t, created.Promoted)
	same([]string{created.Ref}, created.Stored)

	retained, err := s.Engine.Writes.RetainRef(ctx, id, created.Ref, "the user is cooking it tonight")
	require.NoError(t, err)
	same([]string{created.Ref}, retained.Stored)
	released, err := s.Engine.Writes.ReleaseRef(ctx, id, created.Ref)
	require.NoError(t, err)
	assert.Nil(t, released.Stored[created.Ref].ActiveReason, "the release cleared the reason")
	same([]string{created.Ref}, released.Stored)

	// A ref the write did not store is read.
	both, err := s.Engine.Reads.StoredRefs(ctx, id, []string{read.Refs[0], created.Ref}, released.Stored)
	require.NoError(t, err)
	assert.Equal(t, []string{read.Refs[0], created.Ref}, refNames(both))
	one, err := s.Engine.Reads.StoredRef(ctx, id, read.Refs[0], released.Stored)
	require.NoError(t, err)
	assert.Equal(t, read.Refs[0], one.Ref)
}

// TestEndedTurnIsTheRowAsRead: the turn EndTurn returns without reading it
// back is the row a read returns, empty lists of the summary included.
func TestEndedTurnIsTheRowAsRead(t *testing.T) {
	s := apitest.New(t)
	ctx := access.System(context.Background())
	opened, err := s.Engine.Sessions.OpenSession(ctx, engine.OpenSessionInput{Tenant: "acme", ExternalKey: "ended"})
	require.NoError(t, err)
	id := opened.Session.ID
	for i := 0; i < 3; i++ {
		_, err = s.Engine.Turns.BeginTurn(ctx, id, "what's for dinner?")
		require.NoError(t, err)
		_, err = s.Engine.Turns.UpdateTurn(ctx, engine.UpdateTurnInput{SessionID: id, Summary: schematype.ExecutionSummary{Goal: "dinner"}})
		require.NoError(t, err)
		ended, err := s.Engine.Turns.EndTurn(ctx, engine.EndTurnInput{SessionID: id, AssistantMessage: "Dal, then.",
			Summary: &schematype.ExecutionSummary{Decision: "answer", Curation: &schematype.Curation{Retained: []schematype.RetainedRef{}}}})
		require.NoError(t, err)
		want, err := s.Client.Turn.Get(ctx, ended.ID)
		require.NoError(t, err)
		assert.Equal(t, asJSON(t, turnAsRead(want)), asJSON(t, turnAsRead(ended)), "turn %d", i+1)
		assert.Equal(t, want.ExecutionSummary, ended.ExecutionSummary, "nil and empty lists apart (GraphQL null and [])")
		session, err := ended.QuerySession().Only(ctx)
		require.NoError(t, err, "the turn reads its edges through the client once committed")
		assert.Equal(t, id, session.ID)
	}
	sess, err := s.Client.Session.Get(ctx, id)
	require.NoError(t, err)
	assert.Contains(t, sess.ReasoningSummary, "dinner", "turn 1's summary was compressed when turn 3 ended")
}

func turnAsRead(tr *ent.Turn) *ent.Turn {
	c := *tr
	completed := c.CompletedAt.UTC()
	c.StartedAt, c.CompletedAt = c.StartedAt.UTC(), &completed
	return &c
}

// asJSON is a row's fields and loaded edges, without its client.
func asJSON(t *testing.T, row any) string {
	b, err := json.Marshal(row)
	require.NoError(t, err)
	return string(b)
}

func refNames(rows []*ent.Ref) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.Ref
	}
	return out
}
