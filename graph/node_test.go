package graph_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent/apikey"
	"sessiongraph/ent/entitytype"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
)

func TestNodeResolvesEveryType(t *testing.T) {
	s := apitest.New(t)
	ctx := access.System(context.Background())
	se := seedSessions(t, s, "acme", 1)[0]
	addTurns(t, s, se.ID, 1)
	c := s.Client
	turn := c.Turn.Query().OnlyX(ctx)
	ref := c.Ref.Create().SetSessionID(se.ID).SetRef("gen_recipe_1").SetEntityType("recipe").
		SetAction("generated").SetTurnCreated(1).SetTurnLastReferenced(1).SaveX(ctx)
	art := c.Artifact.Create().SetSessionID(se.ID).SetRefID(ref.ID).SetEntityType("recipe").
		SetContent(map[string]any{"name": "Dal"}).SetCreatedTurn(1).SaveX(ctx)
	step := c.StepResult.Create().SetSessionID(se.ID).SetTurn(1).SetStep(1).SetKind("READ").
		SetData([]any{map[string]any{"id": "recipe_1"}}).SetItemCount(1).SaveX(ctx)
	et := c.EntityType.Query().Where(entitytype.Domain("kitchen"), entitytype.Name("recipe")).OnlyX(ctx)
	key := c.APIKey.Create().SetName("ci").SetHash("h").SetPrefix("sg_abc").SetRole(apikey.RoleReader).SetTenant("acme").SaveX(ctx)
	ev := c.Event.Query().OnlyX(ctx)

	want := map[uuid.UUID]string{
		se.ID: "Session", turn.ID: "Turn", ref.ID: "Ref", art.ID: "Artifact", step.ID: "StepResult",
		et.ID: "EntityType", ev.ID: "Event", key.ID: "APIKey",
	}
	for id, typename := range want {
		var out struct {
			Node struct {
				Typename string `json:"__typename"`
				ID       string `json:"id"`
			} `json:"node"`
		}
		s.MustDo(t, `query($id: ID!) { node(id: $id) { __typename id } }`, map[string]any{"id": id}, &out)
		assert.Equal(t, typename, out.Node.Typename)
		assert.Equal(t, id.String(), out.Node.ID)
	}

	// Fields specific to each type come through fragments.
	var typed struct {
		Node struct {
			Content map[string]any       `json:"content"`
			Ref     struct{ Ref string } `json:"ref"`
		} `json:"node"`
	}
	s.MustDo(t, `query($id: ID!) { node(id: $id) { ... on Artifact { content ref { ref } } } }`, map[string]any{"id": art.ID}, &typed)
	assert.Equal(t, map[string]any{"name": "Dal"}, typed.Node.Content)
	assert.Equal(t, "gen_recipe_1", typed.Node.Ref.Ref)

	// nodes keeps order, and an unknown id is null with a NOT_FOUND error at its index.
	missing := uuid.New()
	before := s.Statements()
	res := s.Do(t, `query($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }`,
		map[string]any{"ids": []string{turn.ID.String(), missing.String(), se.ID.String(), ref.ID.String()}})
	assert.Equal(t, int64(4+apitest.AuthStatements), s.Statements()-before,
		"the key from the cache, then one statement to find the tables, then one per table")
	require.Len(t, res.Errors, 1)
	assert.Equal(t, "NOT_FOUND", res.Errors[0].Code())
	assert.Equal(t, []any{"nodes", float64(1)}, res.Errors[0].Path)
	assert.JSONEq(t, `{"nodes": [
		{"__typename": "Turn", "id": "`+turn.ID.String()+`"},
		null,
		{"__typename": "Session", "id": "`+se.ID.String()+`"},
		{"__typename": "Ref", "id": "`+ref.ID.String()+`"}]}`, string(res.Data))

	assert.Equal(t, "NOT_FOUND", s.ErrorCode(t, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": missing}))
	assert.Equal(t, "INVALID_ID", s.ErrorCode(t, `{ node(id: "recipe_1") { id } }`, nil))
}

// A session's node is read by its id alone, which names its shard on
// Citus: one statement. Any other node is located in one statement over
// the tables (which answers its session) and then read by its id and its
// session, so that on Citus only the first statement asks every shard.
func TestNodeReadsASessionByIdAndOtherNodesByTheirSession(t *testing.T) {
	rec := &apitest.Recorder{}
	s := apitest.New(t, apitest.Recording(rec))
	ctx := access.System(context.Background())
	se := seedSessions(t, s, "acme", 1)[0]
	addTurns(t, s, se.ID, 1)
	turn := s.Client.Turn.Query().OnlyX(ctx)
	s.MustDo(t, `{ viewer { role } }`, nil, nil) // the key's first request looks it up

	stmts := rec.Record(func() {
		s.MustDo(t, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": se.ID}, nil)
	})
	require.Len(t, stmts, 1, "a session's node is one statement")
	assert.Contains(t, stmts[0].Query, `FROM "sessions"`)

	stmts = rec.Record(func() {
		s.MustDo(t, `query($id: ID!) { node(id: $id) { ... on Turn { number } } }`, map[string]any{"id": turn.ID}, nil)
	})
	require.Len(t, stmts, 3, "sessions by id, the tables located, then the turn by its id and its session")
	assert.Contains(t, stmts[1].Query, "UNION ALL")
	assert.Contains(t, stmts[2].Query, `FROM "turns"`)
	assert.Contains(t, stmts[2].Query, `"session_id" IN`, "the turn is read on its session's shard")

	// Another tenant's key finds neither the session nor its turn.
	other := s.WithKey(s.NewKey(t, "CLIENT", "other"))
	for _, id := range []uuid.UUID{se.ID, turn.ID} {
		assert.Equal(t, "NOT_FOUND", other.ErrorCode(t, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": id}))
	}
}
