package graph_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

const recordRead = `mutation($id: ID!, $table: String!, $records: [Map!]!, $step: Int) {
  recordRead(input: {sessionID: $id, table: $table, records: $records, step: $step}) {
    records refs { ` + refFields + ` } enrichmentQueue { ref entityType entityID table nameColumn }
  }
}`

type readOut struct {
	RecordRead struct {
		Records         []map[string]any `json:"records"`
		Refs            []refOut         `json:"refs"`
		EnrichmentQueue []struct {
			Ref, EntityType, EntityID, Table, NameColumn string
		} `json:"enrichmentQueue"`
	} `json:"recordRead"`
}

func (a *agent) read(table string, records ...map[string]any) readOut {
	a.t.Helper()
	return decode[readOut](a.t, a.do(recordRead, map[string]any{"table": table, "records": records}))
}

func (a *agent) refs(names ...string) map[string]refOut {
	a.t.Helper()
	out := decode[struct {
		Session struct {
			Refs struct {
				Edges []struct{ Node refOut } `json:"edges"`
			} `json:"refs"`
		} `json:"session"`
	}](a.t, a.do(`query($id: ID!) { session(id: $id) { refs(first: 100) { edges { node { `+refFields+` } } } } }`, nil))
	all := map[string]refOut{}
	for _, e := range out.Session.Refs.Edges {
		all[e.Node.Ref] = e.Node
	}
	for _, n := range names {
		require.Contains(a.t, all, n)
	}
	return all
}

// The read flow then the cross-turn reference flow: "what recipes do i
// have?" then "delete all of them".
func TestReadThenDeleteAcrossTurns(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "read-delete")
	curry, pasta := newUUID(), newUUID()

	a.turn("what recipes do i have?")
	got := a.read("recipes",
		map[string]any{"id": curry, "name": "Thai Curry"},
		map[string]any{"id": pasta, "name": "Pasta"})
	assert.Equal(t, []map[string]any{
		{"id": "recipe_1", "name": "Thai Curry"},
		{"id": "recipe_2", "name": "Pasta"},
	}, got.RecordRead.Records)
	require.Len(t, got.RecordRead.Refs, 2)
	r1 := got.RecordRead.Refs[0]
	assert.Equal(t, "recipe_1", r1.Ref)
	assert.Equal(t, curry, *r1.EntityID)
	assert.Equal(t, "Thai Curry", r1.Label)
	assert.Equal(t, "read", r1.Action)
	assert.Equal(t, 1, r1.TurnCreated)
	assert.Equal(t, 1, r1.TurnLastReferenced)
	assert.Empty(t, got.RecordRead.EnrichmentQueue)

	a.turn("delete all of them")
	tr := decode[struct {
		Session struct {
			TranslateFilters struct {
				Filters []struct {
					Field, Op string
					Value     any
				} `json:"filters"`
				PendingRefs []string `json:"pendingRefs"`
			} `json:"translateFilters"`
		} `json:"session"`
	}](t, rawQuery(t, s, a.id, `query($id: ID!) { session(id: $id) {
		translateFilters(table: "recipes", filters: [{field: "id", op: "in", value: ["recipe_1", "recipe_2"]}, {field: "name", op: "neq", value: "recipe_9"}]) {
			filters { field op value } pendingRefs } } }`))
	f := tr.Session.TranslateFilters
	require.Len(t, f.Filters, 2)
	assert.Equal(t, "id", f.Filters[0].Field)
	assert.Equal(t, "in", f.Filters[0].Op)
	assert.Equal(t, []any{curry, pasta}, f.Filters[0].Value)
	assert.Equal(t, "recipe_9", f.Filters[1].Value, "only id and FK fields are translated")
	assert.Empty(t, f.PendingRefs)

	a.do(`mutation($id: ID!, $ids: [UUID!]!) { recordDeleted(input: {sessionID: $id, entityType: "recipe", entityIDs: $ids}) { refs { ref } } }`,
		map[string]any{"ids": []string{curry, pasta}})
	refs := a.refs("recipe_1", "recipe_2")
	for _, n := range []string{"recipe_1", "recipe_2"} {
		assert.Equal(t, "deleted", refs[n].Action)
		assert.Equal(t, 1, refs[n].TurnCreated)
		assert.Equal(t, 2, refs[n].TurnLastReferenced)
	}
	assert.Len(t, refs, 2, "the same UUIDs never get new refs")
}

// The generate flow with read rerouting and promotion.
func TestGenerateRerouteReadThenSavePromotes(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "generate")

	a.turn("create a simple cod recipe")
	gen := decode[struct {
		RecordGenerated struct {
			Ref refOut `json:"ref"`
		} `json:"recordGenerated"`
	}](t, a.do(`mutation($id: ID!) { recordGenerated(input: {sessionID: $id, entityType: "recipe", step: 2,
		content: {name: "Simple Cod", ingredients: ["cod", "lemon"], instructions: "Bake."}}) { ref { `+refFields+` } } }`, nil))
	g := gen.RecordGenerated.Ref
	assert.Equal(t, "gen_recipe_1", g.Ref)
	assert.Nil(t, g.EntityID, "no UUID until it is saved")
	assert.Equal(t, "Simple Cod", g.Label, "the label rule applies to generated content")
	assert.Equal(t, "generated", g.Action)
	require.NotNil(t, g.Artifact)
	assert.Equal(t, "PENDING", g.Artifact.Status)
	assert.Equal(t, 1, g.Artifact.Revision)

	// Think plans "read gen_recipe_1": the filter names a pending ref, so it
	// is answered from the artifact instead of the database.
	routed := decode[struct {
		Session struct {
			TranslateFilters struct {
				Filters []struct {
					Field, Op string
					Value     any
				} `json:"filters"`
				PendingRefs []string `json:"pendingRefs"`
			} `json:"translateFilters"`
			ReadRefs struct {
				Records      []map[string]any `json:"records"`
				FromDatabase []string         `json:"fromDatabase"`
			} `json:"readRefs"`
		} `json:"session"`
	}](t, a.do(`query($id: ID!) { session(id: $id) {
		translateFilters(table: "recipes", filters: [{field: "id", op: "eq", value: "gen_recipe_1"}]) { filters { field op value } pendingRefs }
		readRefs(refs: ["gen_recipe_1"]) { records fromDatabase } } }`, nil))
	require.Len(t, routed.Session.TranslateFilters.Filters, 1)
	f := routed.Session.TranslateFilters.Filters[0]
	assert.Equal(t, "in", f.Op, "no id is left for the database: the filter matches no row")
	assert.Equal(t, []any{}, f.Value)
	assert.Equal(t, []string{"gen_recipe_1"}, routed.Session.TranslateFilters.PendingRefs)
	assert.Equal(t, []map[string]any{{"id": "gen_recipe_1", "name": "Simple Cod",
		"ingredients": []any{"cod", "lemon"}, "instructions": "Bake."}}, routed.Session.ReadRefs.Records)
	assert.Empty(t, routed.Session.ReadRefs.FromDatabase)

	a.turn("add capers, then save it")
	a.do(`mutation($id: ID!) { updateArtifact(input: {sessionID: $id, ref: "gen_recipe_1",
		content: {name: "Cod with Capers", ingredients: ["cod", "lemon", "capers"], instructions: "Bake."}}) { ref { ref } } }`, nil)
	assert.Equal(t, "pending", pendingCode(t, a), "a linked record cannot point at an unsaved recipe")

	payload := decode[struct {
		Session struct {
			TranslatePayload struct {
				Data  map[string]any `json:"data"`
				Saves *string        `json:"saves"`
			} `json:"translatePayload"`
		} `json:"session"`
	}](t, a.do(`query($id: ID!) { session(id: $id) { translatePayload(entityType: "recipe", data: {id: "gen_recipe_1", name: "Cod with Capers"}) { data saves } } }`, nil))
	assert.Equal(t, map[string]any{"name": "Cod with Capers"}, payload.Session.TranslatePayload.Data, "the database assigns the id")
	assert.Equal(t, "gen_recipe_1", *payload.Session.TranslatePayload.Saves)
	noGen := decode[struct {
		Session struct {
			TranslatePayload struct {
				Saves *string `json:"saves"`
			} `json:"translatePayload"`
		} `json:"session"`
	}](t, a.do(`query($id: ID!) { session(id: $id) { translatePayload(entityType: "recipe", data: {name: "Plain Rice"}) { saves } } }`, nil))
	assert.Nil(t, noGen.Session.TranslatePayload.Saves, "a payload that saves no generated ref says null, not an empty string")

	saved := newUUID()
	created := decode[struct {
		RecordCreated struct {
			Promoted bool   `json:"promoted"`
			Ref      refOut `json:"ref"`
		} `json:"recordCreated"`
	}](t, a.do(`mutation($id: ID!, $e: UUID!) { recordCreated(input: {sessionID: $id, entityType: "recipe", entityID: $e, label: "Cod with Capers"}) {
		promoted ref { `+refFields+` } } }`, map[string]any{"e": saved}))
	c := created.RecordCreated
	assert.True(t, c.Promoted, "promoted by matching type and label")
	assert.Equal(t, "gen_recipe_1", c.Ref.Ref, "the gen ref keeps its name")
	assert.Equal(t, saved, *c.Ref.EntityID)
	assert.Equal(t, "created", c.Ref.Action)
	assert.Equal(t, 2, *c.Ref.TurnPromoted)
	assert.Equal(t, "PROMOTED", c.Ref.Artifact.Status)
	assert.Equal(t, 2, c.Ref.Artifact.Revision)
	assert.Equal(t, "capers", c.Ref.Artifact.Content["ingredients"].([]any)[2], "kept for linked records until the turn ends")

	// The recipe's ingredients now translate to the saved recipe's UUID.
	ing := decode[struct {
		Session struct {
			TranslatePayload struct {
				Data map[string]any `json:"data"`
			} `json:"translatePayload"`
		} `json:"session"`
	}](t, rawQuery(t, s, a.id, `query($id: ID!) { session(id: $id) { translatePayload(entityType: "recipe_ingredient", data: {recipe_id: "gen_recipe_1", name: "capers"}) { data } } }`))
	assert.Equal(t, saved, ing.Session.TranslatePayload.Data["recipe_id"])

	a.turn("thanks")
	refs := a.refs("gen_recipe_1")
	assert.Equal(t, "CLEARED", refs["gen_recipe_1"].Artifact.Status, "endTurn clears artifacts promoted in the turn")
	assert.Len(t, refs, 1)

	// A second save of a generated recipe names its gen ref explicitly.
	a.do(`mutation($id: ID!) { recordGenerated(input: {sessionID: $id, entityType: "recipe", content: {name: "Dal"}}) { ref { ref } } }`, nil)
	other := newUUID()
	byName := decode[struct {
		RecordCreated struct {
			Promoted bool
			Ref      refOut
		} `json:"recordCreated"`
	}](t, a.do(`mutation($id: ID!, $e: UUID!) { recordCreated(input: {sessionID: $id, entityType: "recipe", entityID: $e, genRef: "gen_recipe_2", label: "Red Lentil Dal"}) {
		promoted ref { `+refFields+` } } }`, map[string]any{"e": other}))
	assert.True(t, byName.RecordCreated.Promoted)
	assert.Equal(t, "gen_recipe_2", byName.RecordCreated.Ref.Ref)
	assert.Equal(t, "Red Lentil Dal", byName.RecordCreated.Ref.Label)

	// Creating with nothing to promote registers the next database ref.
	third := newUUID()
	plain := decode[struct {
		RecordCreated struct {
			Promoted bool
			Ref      refOut
		} `json:"recordCreated"`
	}](t, a.do(`mutation($id: ID!, $e: UUID!) { recordCreated(input: {sessionID: $id, entityType: "recipe", entityID: $e, label: "Toast"}) {
		promoted ref { `+refFields+` } } }`, map[string]any{"e": third}))
	assert.False(t, plain.RecordCreated.Promoted)
	assert.Equal(t, "recipe_1", plain.RecordCreated.Ref.Ref)
	assert.Equal(t, "created", plain.RecordCreated.Ref.Action)
}

// pendingCode checks that translating a payload pointing at a pending gen ref fails.
func pendingCode(t *testing.T, a *agent) string {
	t.Helper()
	code := a.code(`query($id: ID!) { session(id: $id) { translatePayload(entityType: "recipe_ingredient", data: {recipe_id: "gen_recipe_1", name: "capers"}) { data } } }`, nil)
	if code == "REF_PENDING" {
		return "pending"
	}
	return code
}

// Lazy FK registration: "what's in my meal plan?"
func TestFKLazyRegistrationAndEnrichment(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "fk")
	plan, recipe := newUUID(), newUUID()

	a.turn("what's in my meal plan?")
	got := a.read("meal_plans", map[string]any{"id": plan, "date": "2026-01-12", "meal_type": "lunch", "recipe_id": recipe})
	assert.Equal(t, []map[string]any{{"id": "meal_plan_1", "date": "2026-01-12", "meal_type": "lunch", "recipe_id": "recipe_1"}},
		got.RecordRead.Records, "no label yet: the recipe is new")
	require.Len(t, got.RecordRead.EnrichmentQueue, 1)
	q := got.RecordRead.EnrichmentQueue[0]
	assert.Equal(t, "recipe_1", q.Ref)
	assert.Equal(t, "recipe", q.EntityType)
	assert.Equal(t, recipe, q.EntityID)
	assert.Equal(t, "recipes", q.Table)
	assert.Equal(t, "name", q.NameColumn)

	refs := a.refs("meal_plan_1", "recipe_1")
	assert.Equal(t, "2026-01-12 lunch", refs["meal_plan_1"].Label, "the label template")
	assert.Equal(t, "linked", refs["recipe_1"].Action)
	assert.Equal(t, "", refs["recipe_1"].Label)

	// The runtime batch-fetches the names and applies them; the read's
	// records come back with the label the LLM should see.
	enriched := decode[struct {
		ApplyEnrichment struct {
			Refs    []refOut         `json:"refs"`
			Records []map[string]any `json:"records"`
		} `json:"applyEnrichment"`
	}](t, a.do(`mutation($id: ID!, $records: [Map!]) { applyEnrichment(input: {sessionID: $id, table: "meal_plans", records: $records,
		labels: [{ref: "recipe_1", label: "Butter Chicken"}]}) { refs { ref label } records } }`, map[string]any{"records": got.RecordRead.Records}))
	assert.Equal(t, []map[string]any{{"id": "meal_plan_1", "date": "2026-01-12", "meal_type": "lunch",
		"recipe_id": "recipe_1", "_recipe_id_label": "Butter Chicken"}}, enriched.ApplyEnrichment.Records)
	assert.Equal(t, "Butter Chicken", enriched.ApplyEnrichment.Refs[0].Label)
	queue := decode[struct {
		Session struct {
			EnrichmentQueue []any `json:"enrichmentQueue"`
		} `json:"session"`
	}](t, a.do(`query($id: ID!) { session(id: $id) { enrichmentQueue { ref } } }`, nil))
	assert.Empty(t, queue.Session.EnrichmentQueue)
	assert.Equal(t, "Butter Chicken", a.refs("recipe_1")["recipe_1"].Label)
	assert.Equal(t, "linked", a.refs("recipe_1")["recipe_1"].Action)

	again := a.read("meal_plans", map[string]any{"id": newUUID(), "date": "2026-01-13", "meal_type": "dinner", "recipe_id": recipe})
	assert.Equal(t, []map[string]any{{"id": "meal_plan_2", "date": "2026-01-13", "meal_type": "dinner",
		"recipe_id": "recipe_1", "_recipe_id_label": "Butter Chicken"}}, again.RecordRead.Records)
	assert.Empty(t, again.RecordRead.EnrichmentQueue)

	// Nested relations: a full recipe read registers its ingredients too.
	nested := a.read("recipes", map[string]any{"id": recipe, "name": "Butter Chicken", "instructions": "Simmer.",
		"recipe_ingredients": []any{map[string]any{"id": newUUID(), "name": "chicken", "recipe_id": recipe, "ingredient_id": newUUID()}}})
	assert.Equal(t, []map[string]any{{"id": "recipe_1", "name": "Butter Chicken", "instructions": "Simmer.",
		"recipe_ingredients": []any{map[string]any{"id": "recipe_ingredient_1", "name": "chicken",
			"recipe_id": "recipe_1", "_recipe_id_label": "Butter Chicken", "ingredient_id": "ingredient_1"}}}},
		nested.RecordRead.Records)
	assert.Equal(t, "read", a.refs("recipe_1")["recipe_1"].Action, "reading a linked entity makes it read")
}

// Detail tracking: summary first, full later.
func TestDetailTrackingSummaryThenFull(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "detail")
	id := newUUID()

	a.turn("list recipes")
	a.read("recipes", map[string]any{"id": id, "name": "Butter Chicken", "cuisine": "Indian"})
	r := a.refs("recipe_1")["recipe_1"]
	assert.Equal(t, "SUMMARY", *r.DetailLevel)
	assert.Nil(t, r.FullTurn)

	a.turn("anything else?")
	a.turn("show me the butter chicken")
	a.read("recipes", map[string]any{"id": id, "name": "Butter Chicken", "cuisine": "Indian", "instructions": "Marinate, then simmer."})
	r = a.refs("recipe_1")["recipe_1"]
	assert.Equal(t, "FULL", *r.DetailLevel)
	assert.Equal(t, 3, *r.FullTurn)
	assert.Equal(t, 1, r.TurnCreated)
	assert.Equal(t, 3, r.TurnLastReferenced)
}

// Registration from the frontend: UI actions and @-mentions.
func TestUserActionsFromTheFrontend(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "ui")
	pancakes := newUUID()
	a.turn("hi")

	userAction := `mutation($id: ID!, $kind: UserActionKind!, $e: UUID!, $label: String) {
		recordUserAction(input: {sessionID: $id, kind: $kind, entityType: "recipe", entityID: $e, label: $label}) { ref { ` + refFields + ` } } }`
	out := decode[struct {
		RecordUserAction struct{ Ref refOut } `json:"recordUserAction"`
	}](t, a.do(userAction, map[string]any{"kind": "CREATED", "e": pancakes, "label": "Pancakes"}))
	assert.Equal(t, "recipe_1", out.RecordUserAction.Ref.Ref)
	assert.Equal(t, "created:user", out.RecordUserAction.Ref.Action)
	assert.Equal(t, "Pancakes", out.RecordUserAction.Ref.Label)

	for kind, action := range map[string]string{"UPDATED": "updated:user", "MENTIONED": "mentioned:user", "DELETED": "deleted:user"} {
		out = decode[struct {
			RecordUserAction struct{ Ref refOut } `json:"recordUserAction"`
		}](t, a.do(userAction, map[string]any{"kind": kind, "e": pancakes}))
		assert.Equal(t, "recipe_1", out.RecordUserAction.Ref.Ref, "a known entity keeps its ref")
		assert.Equal(t, action, out.RecordUserAction.Ref.Action)
		assert.Equal(t, "Pancakes", out.RecordUserAction.Ref.Label, "no label keeps the old one")
	}
}

// Tiers: retention past the 2-turn window.
func TestRetentionPastTheTurnWindow(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "retain")
	a.turn("what recipes do I have?")
	a.read("recipes", map[string]any{"id": newUUID(), "name": "Thai Curry"}, map[string]any{"id": newUUID(), "name": "Pasta"})
	a.turn("and my inventory?")
	a.read("inventory", map[string]any{"id": newUUID(), "name": "rice"})
	a.do(`mutation($id: ID!) { recordGenerated(input: {sessionID: $id, entityType: "meal_plan", content: {date: "2026-01-12", meal_type: "dinner"}}) { ref { ref } } }`, nil)
	a.turn("plan my week")

	tiers := func() (active, generated, retained []string, reasons map[string]string) {
		out := decode[struct {
			Session struct {
				ActiveEntities struct {
					Active, Generated, Retained []refOut
				} `json:"activeEntities"`
			} `json:"session"`
		}](t, a.do(`query($id: ID!) { session(id: $id) { activeEntities { active { `+refFields+` } generated { `+refFields+` } retained { `+refFields+` } } } }`, nil))
		names := func(rs []refOut) []string {
			out := []string{}
			for _, r := range rs {
				out = append(out, r.Ref)
			}
			return out
		}
		reasons = map[string]string{}
		for _, r := range out.Session.ActiveEntities.Retained {
			reasons[r.Ref] = *r.ActiveReason
		}
		e := out.Session.ActiveEntities
		return names(e.Active), names(e.Generated), names(e.Retained), reasons
	}

	active, generated, retained, _ := tiers()
	assert.Equal(t, []string{"inv_1"}, active, "turn 1's recipes fell out of the window at turn 3")
	assert.Equal(t, []string{"gen_meal_plan_1"}, generated)
	assert.Empty(t, retained)

	a.do(`mutation($id: ID!) { retainRef(input: {sessionID: $id, ref: "recipe_1", reason: "User's ongoing weekly meal plan goal"}) { ref { ref } } }`, nil)
	_, _, retained, reasons := tiers()
	assert.Equal(t, []string{"recipe_1"}, retained)
	assert.Equal(t, "User's ongoing weekly meal plan goal", reasons["recipe_1"])

	a.do(`mutation($id: ID!) { mentionEntity(input: {sessionID: $id, refs: ["recipe_2"]}) { refs { ref } } }`, nil)
	active, _, _, _ = tiers()
	assert.ElementsMatch(t, []string{"inv_1", "recipe_2"}, active, "a mention brings a ref back into the window")

	a.do(`mutation($id: ID!) { releaseRef(input: {sessionID: $id, ref: "recipe_1"}) { ref { ref } } }`, nil)
	_, _, retained, _ = tiers()
	assert.Empty(t, retained)

	resolved := decode[struct {
		Session struct {
			ResolveRefs []struct {
				Ref      string  `json:"ref"`
				EntityID *string `json:"entityID"`
				Pending  bool    `json:"pending"`
			} `json:"resolveRefs"`
		} `json:"session"`
	}](t, a.do(`query($id: ID!) { session(id: $id) { resolveRefs(refs: ["inv_1", "gen_meal_plan_1"]) { ref entityID pending } } }`, nil))
	require.Len(t, resolved.Session.ResolveRefs, 2)
	assert.NotNil(t, resolved.Session.ResolveRefs[0].EntityID)
	assert.False(t, resolved.Session.ResolveRefs[0].Pending)
	assert.Nil(t, resolved.Session.ResolveRefs[1].EntityID)
	assert.True(t, resolved.Session.ResolveRefs[1].Pending)
}

// rawQuery runs a query whose answer may hold UUIDs on purpose.
func rawQuery(t *testing.T, s *apitest.Server, id, query string) json.RawMessage {
	t.Helper()
	res := s.Do(t, query, map[string]any{"id": id})
	require.Empty(t, res.Errors)
	return res.Data
}
