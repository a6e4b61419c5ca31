package graph_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

const clearArtifact = `mutation($id: ID!, $ref: String!) {
  clearArtifact(input: {sessionID: $id, ref: $ref}) { ref { ref action artifact { status revision content } } }
}`

type artifactOut struct {
	Ref         struct{ Ref string } `json:"ref"`
	Status      string               `json:"status"`
	Label       string               `json:"label"`
	Content     map[string]any       `json:"content"`
	CreatedTurn int                  `json:"createdTurn"`
}

const artifactFields = `ref { ref } status label content createdTurn`

type artifactLists struct {
	Session struct {
		Pending   struct{ Edges []struct{ Node artifactOut } } `json:"pendingArtifacts"`
		JustSaved struct{ Edges []struct{ Node artifactOut } } `json:"justSavedArtifacts"`
		All       struct{ TotalCount int }                     `json:"artifacts"`
	} `json:"session"`
}

func (a *agent) artifactLists() artifactLists {
	a.t.Helper()
	return decode[artifactLists](a.t, a.do(`query($id: ID!) { session(id: $id) {
		pendingArtifacts(first: 10) { edges { node { `+artifactFields+` } } }
		justSavedArtifacts(first: 10) { edges { node { `+artifactFields+` } } }
		artifacts(first: 10) { totalCount } } }`, nil))
}

func (a *agent) generate(entityType string, content map[string]any) string {
	a.t.Helper()
	return decode[struct {
		RecordGenerated struct{ Ref struct{ Ref string } } `json:"recordGenerated"`
	}](a.t, a.do(`mutation($id: ID!, $type: String!, $content: Map!) { recordGenerated(input: {sessionID: $id, entityType: $type, content: $content}) { ref { ref } } }`,
		map[string]any{"type": entityType, "content": content})).RecordGenerated.Ref.Ref
}

func refsOf(edges []struct{ Node artifactOut }) []string {
	out := []string{}
	for _, e := range edges {
		out = append(out, e.Node.Ref.Ref)
	}
	return out
}

// Generate three, save one, discard one: the API lists the truly pending
// and the just saved apart, and a clear touches only its own artifact.
func TestClearArtifactClearsOneAndOnlyOne(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "clear")
	a.turn("suggest three desserts")
	for _, name := range []string{"Lemon Madeleine", "Pistachio Kulfi", "Apple Crumble"} {
		a.generate("recipe", map[string]any{"name": name, "ingredients": []any{"flour"}})
	}
	a.do(`mutation($id: ID!, $e: UUID!) { recordCreated(input: {sessionID: $id, entityType: "recipe", entityID: $e, genRef: "gen_recipe_2"}) { promoted } }`,
		map[string]any{"e": newUUID()})

	lists := a.artifactLists()
	assert.Equal(t, []string{"gen_recipe_1", "gen_recipe_3"}, refsOf(lists.Session.Pending.Edges))
	assert.Equal(t, []string{"gen_recipe_2"}, refsOf(lists.Session.JustSaved.Edges))
	assert.Equal(t, 3, lists.Session.All.TotalCount, "the artifacts connection still lists them all")

	cleared := decode[struct {
		ClearArtifact struct{ Ref refOut } `json:"clearArtifact"`
	}](t, a.do(clearArtifact, map[string]any{"ref": "gen_recipe_3"}))
	assert.Equal(t, "gen_recipe_3", cleared.ClearArtifact.Ref.Ref)
	assert.Equal(t, "CLEARED", cleared.ClearArtifact.Ref.Artifact.Status)
	assert.Equal(t, map[string]any{"name": "Apple Crumble", "ingredients": []any{"flour"}}, cleared.ClearArtifact.Ref.Artifact.Content, "the content is kept")

	// Saved and its linked records written: the runtime clears it before the turn ends.
	a.do(clearArtifact, map[string]any{"ref": "gen_recipe_2"})
	lists = a.artifactLists()
	assert.Equal(t, []string{"gen_recipe_1"}, refsOf(lists.Session.Pending.Edges), "the other pending artifact is untouched")
	assert.Empty(t, lists.Session.JustSaved.Edges)
	refs := a.refs("gen_recipe_1", "gen_recipe_2", "gen_recipe_3")
	assert.Equal(t, "PENDING", refs["gen_recipe_1"].Artifact.Status)
	assert.Equal(t, 1, refs["gen_recipe_1"].Artifact.Revision)
	assert.Equal(t, "created", refs["gen_recipe_2"].Action, "clearing keeps the ref as it was")

	act := a.context("ACT", nil)
	assert.Contains(t, act.Text, "`gen_recipe_1`: Lemon Madeleine")
	assert.NotContains(t, act.Text, "Apple Crumble (recipe), revision", "a cleared artifact is not working data any more")
	assert.NotContains(t, act.Text, "## Just saved")
	assert.Equal(t, []string{"gen_recipe_1"}, act.Tiers["generated"])

	var events struct {
		Session struct {
			Events struct {
				Edges []struct{ Node struct{ Kind string } }
			}
		}
	}
	s.MustDo(t, `query($id: ID!) { session(id: $id) { events(last: 2) { edges { node { kind } } } } }`, map[string]any{"id": a.id}, &events)
	require.Len(t, events.Session.Events.Edges, 2)
	assert.Equal(t, "artifact.cleared", events.Session.Events.Edges[0].Node.Kind)
	assert.Equal(t, "artifact.cleared", events.Session.Events.Edges[1].Node.Kind, "one event per clear")
}

func TestClearArtifactRefusesWhatItCannotClear(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "clear-errors")
	other := newAgent(t, s, "clear-other")
	other.turn("suggest")
	other.generate("recipe", map[string]any{"name": "Elsewhere"})
	other.generate("recipe", map[string]any{"name": "Elsewhere too"})
	a.turn("suggest a dessert")
	a.generate("recipe", map[string]any{"name": "Lemon Madeleine"})
	a.read("recipes", map[string]any{"id": newUUID(), "name": "Dal"})
	a.do(clearArtifact, map[string]any{"ref": "gen_recipe_1"})
	before := a.artifactLists()

	assert.Equal(t, "ARTIFACT_CLEARED", a.code(clearArtifact, map[string]any{"ref": "gen_recipe_1"}), "cleared twice")
	assert.Equal(t, "REF_NOT_FOUND", a.code(clearArtifact, map[string]any{"ref": "gen_recipe_9"}), "an unknown ref")
	assert.Equal(t, "REF_NOT_FOUND", a.code(clearArtifact, map[string]any{"ref": "gen_recipe_2"}), "a ref only the other session has")
	assert.Equal(t, "BAD_USER_INPUT", a.code(clearArtifact, map[string]any{"ref": "recipe_1"}), "a database entity has no artifact")
	assert.Equal(t, before, a.artifactLists(), "nothing changed")
	assert.Len(t, other.artifactLists().Session.Pending.Edges, 2, "the other session's artifacts are untouched")
}

// The content archive: generated content outlives its turn. A later turn
// that shows it again is still summarized by name, and a cleared artifact
// reads back by its ref.
func TestTheContentArchiveKeepsWhatWasGenerated(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "archive")
	recipe := "Lemon Madeleine\nServings: 12\nIngredients: butter, sugar, eggs, lemon zest\nInstructions: whisk, rest the batter, bake for 10 minutes."
	a.turn("suggest a french dessert")
	a.read("recipes", map[string]any{"id": newUUID(), "name": "Crêpes"})
	a.generate("recipe", map[string]any{"name": "Lemon Madeleine", "servings": 12, "ingredients": []any{"butter", "sugar", "eggs", "lemon zest"}})
	a.do(`mutation($id: ID!, $m: String!) { endTurn(input: {sessionID: $id, assistantMessage: $m}) { turn { number } } }`, map[string]any{"m": "Here it is: " + recipe})
	a.do(`mutation($id: ID!) { beginTurn(input: {sessionID: $id, userMessage: "show me that recipe again"}) { turn { number } } }`, nil)
	a.do(`mutation($id: ID!, $m: String!) { endTurn(input: {sessionID: $id, assistantMessage: $m}) { turn { number } } }`, map[string]any{"m": "Again: " + recipe})
	a.do(`mutation($id: ID!) { beginTurn(input: {sessionID: $id, userMessage: "never mind, drop it"}) { turn { number } } }`, nil)
	a.do(clearArtifact, map[string]any{"ref": "gen_recipe_1"})

	turns := decode[struct {
		Session struct {
			Turns struct {
				Edges []struct {
					Node struct{ AssistantSummary string }
				}
			}
		}
	}](t, a.do(`query($id: ID!) { session(id: $id) { turns(first: 2, orderBy: [{field: NUMBER}]) { edges { node { assistantSummary } } } } }`, nil))
	assert.Equal(t, "Generated recipe(s): Lemon Madeleine. [Content archived]", turns.Session.Turns.Edges[0].Node.AssistantSummary)
	assert.Equal(t, "Generated recipe(s): Lemon Madeleine. [Content archived]", turns.Session.Turns.Edges[1].Node.AssistantSummary,
		"a later turn showing it again still names it")

	archived := decode[struct {
		Session struct {
			ArchivedContent *artifactOut
			None            *artifactOut
			ReadRefs        struct {
				Records      []map[string]any
				FromDatabase []string
			}
		}
	}](t, a.do(`query($id: ID!) { session(id: $id) {
		archivedContent(ref: "gen_recipe_1") { `+artifactFields+` }
		none: archivedContent(ref: "recipe_1") { status }
		readRefs(refs: ["gen_recipe_1"]) { records fromDatabase } } }`, nil))
	require.NotNil(t, archived.Session.ArchivedContent)
	assert.Equal(t, artifactOut{Ref: struct{ Ref string }{"gen_recipe_1"}, Status: "CLEARED", Label: "Lemon Madeleine", CreatedTurn: 1,
		Content: map[string]any{"name": "Lemon Madeleine", "servings": float64(12), "ingredients": []any{"butter", "sugar", "eggs", "lemon zest"}}},
		*archived.Session.ArchivedContent)
	assert.Nil(t, archived.Session.None, "recipe_1 is a database entity: it never had generated content")
	assert.Equal(t, []map[string]any{{"id": "gen_recipe_1", "name": "Lemon Madeleine", "servings": float64(12),
		"ingredients": []any{"butter", "sugar", "eggs", "lemon zest"}}}, archived.Session.ReadRefs.Records,
		"never saved, it exists only in the archive: readRefs answers from there")
	assert.Empty(t, archived.Session.ReadRefs.FromDatabase)

	assert.Equal(t, "REF_NOT_FOUND", a.code(`query($id: ID!) { session(id: $id) { archivedContent(ref: "gen_recipe_7") { status } } }`, nil))
}
