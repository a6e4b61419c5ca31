package graph_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/tokenizer"
)

const recordStepResult = `mutation($id: ID!, $step: Int!, $kind: StepResultKind!, $description: String, $data: JSON, $refs: [String!]) {
  recordStepResult(input: {sessionID: $id, step: $step, kind: $kind, description: $description, data: $data, refs: $refs}) {
    stepResult { turn step kind description data refs itemCount }
  }
}`

type stepOut struct {
	Turn        int    `json:"turn"`
	Step        int    `json:"step"`
	Kind        string `json:"kind"`
	Description string `json:"description"`
	Data        []any  `json:"data"`
	Refs        []string
	ItemCount   int `json:"itemCount"`
}

// describe gives a step its kind and description, keeping its data.
func (a *agent) describe(step int, kind, description string) stepOut {
	a.t.Helper()
	return decode[struct {
		RecordStepResult struct{ StepResult stepOut } `json:"recordStepResult"`
	}](a.t, a.do(recordStepResult, map[string]any{"step": step, "kind": kind, "description": description})).RecordStepResult.StepResult
}

func (a *agent) readStep(table string, step int, records ...map[string]any) readOut {
	a.t.Helper()
	return decode[readOut](a.t, a.do(recordRead, map[string]any{"table": table, "records": records, "step": step}))
}

// stepsSession scripts an Act example over two turns: turn 1 finds
// Indian recipes and generates a weekly plan; turn 2, still open, saves the
// plan, checks the pantry and works out what is missing, passing the
// analysis a raw UUID. The ACT build then has three steps in full (turn 2)
// and two older ones (turn 1), and the plan just saved.
func stepsSession(t *testing.T, s *apitest.Server, afterTurn1 ...func(*agent)) *agent {
	t.Helper()
	var opened openedSession
	s.MustDo(t, openSession, map[string]any{"in": map[string]any{"tenant": "acme", "externalKey": "indian-week"}}, &opened)
	a := &agent{t: t, s: s, id: opened.OpenSession.Session.ID}
	dal, korma, paneer, biryani, chana := newUUID(), newUUID(), newUUID(), newUUID(), newUUID()

	a.do(`mutation($id: ID!) { beginTurn(input: {sessionID: $id, userMessage: "find me indian recipes and plan the week"}) { turn { number } } }`, nil)
	a.readStep("recipes", 1,
		map[string]any{"id": dal, "name": "Dal Tadka", "cuisine": "indian"},
		map[string]any{"id": korma, "name": "Vegetable Korma", "cuisine": "indian"},
		map[string]any{"id": paneer, "name": "Palak Paneer", "cuisine": "indian"},
		map[string]any{"id": biryani, "name": "Biryani", "cuisine": "indian"},
		map[string]any{"id": chana, "name": "Chana Masala", "cuisine": "indian"})
	a.describe(1, "READ", "Find Indian recipes")
	a.do(`mutation($id: ID!, $recipe: String!) { recordGenerated(input: {sessionID: $id, entityType: "meal_plan", step: 2,
		content: {date: "2026-01-12", meal_type: "dinner", recipe_id: $recipe}}) { ref { ref } } }`, map[string]any{"recipe": dal})
	a.describe(2, "GENERATE", "Generate weekly plan")
	a.do(`mutation($id: ID!) { endTurn(input: {sessionID: $id, assistantMessage: "I found five Indian recipes and planned Dal Tadka for Monday.",
		summary: {decision: "plan_direct", goal: "Plan Indian dinners", phase: "narrowing"}}) { turn { number } } }`, nil)
	for _, f := range afterTurn1 {
		f(a)
	}

	a.do(`mutation($id: ID!) { beginTurn(input: {sessionID: $id, userMessage: "save the plan and check what I need"}) { turn { number } } }`, nil)
	a.do(`mutation($id: ID!, $e: UUID!) { recordCreated(input: {sessionID: $id, entityType: "meal_plan", entityID: $e, genRef: "gen_meal_plan_1", step: 1}) { promoted } }`,
		map[string]any{"e": newUUID()})
	a.describe(1, "WRITE", "Save the weekly plan")
	a.readStep("inventory", 2,
		map[string]any{"id": newUUID(), "name": "red lentils", "quantity": 1, "unit": "kg"},
		map[string]any{"id": newUUID(), "name": "basmati rice", "quantity": 2, "unit": "kg"})
	a.describe(2, "READ", "Check the pantry")
	a.do(recordStepResult, map[string]any{"step": 3, "kind": "ANALYZE", "description": "Find what is missing for " + dal,
		"data": map[string]any{"missing": []any{"ghee", "cumin seeds"}, "for": dal, "note": "buy before Monday"}})
	a.do(`mutation($id: ID!) { updateTurn(input: {sessionID: $id, summary: {decision: "plan_direct", goal: "Save and shop", phase: "executing", userExpressed: "cooks on weeknights"}}) { turn { number } } }`, nil)
	return a
}

// TestStepResultsMatchTheirGoldenFiles pins ACT and REPLY on the scripted
// session: the three newest steps in full (across the turn), the two older
// ones as one line each, the plan just saved, and REPLY's outcome told from
// the step results.
func TestStepResultsMatchTheirGoldenFiles(t *testing.T) {
	s := apitest.New(t)
	a := stepsSession(t, s)
	for _, node := range []string{"ACT", "REPLY"} {
		t.Run(node, func(t *testing.T) {
			b := a.context(node, nil)
			assert.LessOrEqual(t, b.TokenCount, b.Budget)
			counter, err := tokenizer.Get(tokenizer.Name(b.Tokenizer))
			require.NoError(t, err)
			assert.Equal(t, counter.Count(b.Text), b.TokenCount)
			assert.NotRegexp(t, uuidShape, b.Text, "no UUID reaches a prompt, not even the one the analysis was given")
			golden(t, "steps_"+strings.ToLower(node), render(b))
		})
	}
}

func TestActShowsThreeStepsInFullAndOlderOnesSummarized(t *testing.T) {
	s := apitest.New(t)
	a := stepsSession(t, s)
	act := a.context("ACT", nil)
	sections := map[string]string{}
	var order []string
	for _, sec := range act.Sections {
		order = append(order, sec.Name)
	}
	for _, part := range strings.Split(act.Text, "\n\n## ") {
		title, body, _ := strings.Cut(strings.TrimPrefix(part, "## "), "\n")
		sections[title] = strings.TrimSpace(body)
	}
	assert.Equal(t, []string{"just_saved", "step_results", "conversation", "step_summaries", "entities"}, order,
		"working data first, then the conversation, older steps, and the entities last")
	full := sections["Step results"]
	assert.Equal(t, 3, strings.Count(full, "### "), "three steps in full")
	assert.Contains(t, full, "### T2 step 3 (ANALYZE): Find what is missing for recipe_1 — 1 item\nRefs: recipe_1\n"+
		`- {"for":"recipe_1","missing":["ghee","cumin seeds"],"note":"buy before Monday"}`)
	assert.Contains(t, full, "### T2 step 2 (READ): Check the pantry — 2 items\nRefs: inv_1, inv_2\n"+
		`- {"id":"inv_1","name":"red lentils","quantity":1,"unit":"kg"}`+"\n"+
		`- {"id":"inv_2","name":"basmati rice","quantity":2,"unit":"kg"}`)
	assert.Contains(t, full, "### T2 step 1 (WRITE): Save the weekly plan — 1 item\nRefs: gen_meal_plan_1\n"+
		`- {"action":"created","id":"gen_meal_plan_1","label":"2026-01-12 dinner"}`)
	assert.Equal(t, "T1 step 2 (GENERATE): Generate weekly plan — 1 item: gen_meal_plan_1\n"+
		"T1 step 1 (READ): Find Indian recipes — 5 items: recipe_1, recipe_2, recipe_3, recipe_4, recipe_5",
		sections["Step summaries"], "older steps: what step, which refs, how many items")

	// With a budget that holds only part of the step data, the newest items
	// stay and the cut is said.
	tight := a.context("ACT", map[string]any{"tokenBudget": 300})
	assert.LessOrEqual(t, tight.TokenCount, 300)
	assert.Contains(t, tight.Text, "### T2 step 3 (ANALYZE)")
	assert.NotEmpty(t, tight.Notes)
}

// REPLY tells what a turn accomplished from its step results, in the
// seeds' words.
func TestReplysOutcomeComesFromTheStepResults(t *testing.T) {
	s := apitest.New(t)
	stepsSession(t, s, func(a *agent) {
		reply := a.context("REPLY", nil)
		assert.Contains(t, reply.Text, "## Execution outcome\nFind Indian recipes: 5 items; Generate weekly plan: completed")
		assert.Contains(t, reply.Text, "- `gen_meal_plan_1`: 2026-01-12 dinner (meal_plan) — NOT YET SAVED. Offer to save if appropriate.")
	})
}

func TestRecordCallsWithAStepFillItsResult(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "steps")
	a.turn("what can I cook?")
	first := a.readStep("recipes", 1, map[string]any{"id": newUUID(), "name": "Dal Tadka"}, map[string]any{"id": newUUID(), "name": "Biryani"})
	second := a.readStep("recipes", 1, map[string]any{"id": newUUID(), "name": "Korma"})
	described := a.describe(1, "READ", "Find Indian recipes")

	want := append(append([]any{}, asAny(first.RecordRead.Records)...), asAny(second.RecordRead.Records)...)
	assert.Equal(t, stepOut{Turn: 1, Step: 1, Kind: "READ", Description: "Find Indian recipes", Data: want,
		Refs: []string{"recipe_1", "recipe_2", "recipe_3"}, ItemCount: 3}, described,
		"the step's data is what recordRead returned, both calls, without sending it again")

	out := decode[struct {
		Session struct {
			Turns struct {
				Edges []struct {
					Node struct{ StepResults []stepOut }
				}
			}
			StepResults struct {
				TotalCount int
				Edges      []struct{ Node stepOut }
			}
		}
	}](t, a.do(`query($id: ID!) { session(id: $id) {
		turns(first: 1) { edges { node { stepResults { turn step kind description data refs itemCount } } } }
		stepResults(first: 5, where: {kind: READ}) { totalCount edges { node { turn step kind description data refs itemCount } } } } }`, nil))
	assert.Equal(t, []stepOut{described}, out.Session.Turns.Edges[0].Node.StepResults)
	assert.Equal(t, 1, out.Session.StepResults.TotalCount)
	assert.Equal(t, described, out.Session.StepResults.Edges[0].Node)

	// Data given replaces what the record calls gathered.
	replaced := decode[struct {
		RecordStepResult struct{ StepResult stepOut } `json:"recordStepResult"`
	}](t, a.do(recordStepResult, map[string]any{"step": 1, "kind": "READ", "data": []any{map[string]any{"id": "recipe_2", "name": "Biryani"}}, "refs": []string{"recipe_3"}}))
	assert.Equal(t, stepOut{Turn: 1, Step: 1, Kind: "READ", Description: "Find Indian recipes",
		Data: []any{map[string]any{"id": "recipe_2", "name": "Biryani"}}, Refs: []string{"recipe_3", "recipe_2"}, ItemCount: 1},
		replaced.RecordStepResult.StepResult)

	// A reset clears the conversation, step results included.
	a.do(`mutation($id: ID!) { resetConversation(input: {sessionID: $id}) { session { id } } }`, nil)
	left := decode[struct {
		Session struct{ StepResults struct{ TotalCount int } }
	}](t, a.do(`query($id: ID!) { session(id: $id) { stepResults(first: 1) { totalCount } } }`, nil))
	assert.Zero(t, left.Session.StepResults.TotalCount)
	assert.NotContains(t, a.context("ACT", nil).Text, "## Step results")
}

// A step keeps its data up to 256 KiB: past it, items are counted, not kept.
func TestAStepKeepsItsDataUpToItsLimit(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "big-step")
	a.turn("read everything")
	records := make([]map[string]any, 400)
	for i := range records {
		records[i] = map[string]any{"id": newUUID(), "name": "Stew", "notes": strings.Repeat("slow ", 200)}
	}
	a.readStep("recipes", 1, records...)
	a.readStep("recipes", 1, records[:1]...) // over the limit already: counted only
	step := a.describe(1, "READ", "Read every recipe")
	assert.Equal(t, 401, step.ItemCount)
	assert.Len(t, step.Refs, 400, "refs are kept whole, once each")
	assert.Less(t, len(step.Data), 400)
	assert.Greater(t, len(step.Data), 200)
	act := a.context("ACT", nil)
	assert.LessOrEqual(t, act.TokenCount, act.Budget)
	assert.Contains(t, act.Text, "### T1 step 1 (READ): Read every recipe — 401 items")
}

func TestStepResultsRefuseBadInput(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "bad-steps")
	other := newAgent(t, s, "other-steps")
	other.turn("hello")
	other.read("recipes", map[string]any{"id": newUUID(), "name": "Only in the other session"})
	other.read("recipes", map[string]any{"id": newUUID(), "name": "Also there"})

	assert.Equal(t, "NO_OPEN_TURN", a.code(recordStepResult, map[string]any{"step": 1, "kind": "READ"}), "a step belongs to a running turn")
	a.turn("find recipes")
	a.read("recipes", map[string]any{"id": newUUID(), "name": "Dal"})
	events := func() int {
		var out struct {
			Session struct{ Events struct{ TotalCount int } }
		}
		s.MustDo(t, `query($id: ID!) { session(id: $id) { events(first: 1) { totalCount } } }`, map[string]any{"id": a.id}, &out)
		return out.Session.Events.TotalCount
	}
	before := events()
	for name, c := range map[string]struct {
		query string
		vars  map[string]any
		code  string
		field string
	}{
		"step 0":                   {recordStepResult, map[string]any{"step": 0, "kind": "READ"}, "BAD_USER_INPUT", "step"},
		"step past the last":       {recordStepResult, map[string]any{"step": 1001, "kind": "READ"}, "BAD_USER_INPUT", "step"},
		"record call with step -1": {recordRead, map[string]any{"table": "recipes", "records": []any{map[string]any{"id": newUUID()}}, "step": -1}, "BAD_USER_INPUT", "step"},
		"oversize data": {recordStepResult, map[string]any{"step": 1, "kind": "ANALYZE",
			"data": strings.Repeat("x", 300<<10)}, "BAD_USER_INPUT", "data"},
		"a null item":              {recordStepResult, map[string]any{"step": 1, "kind": "READ", "data": []any{map[string]any{"id": "recipe_1"}, nil}}, "BAD_USER_INPUT", "data"},
		"a ref of another session": {recordStepResult, map[string]any{"step": 1, "kind": "READ", "refs": []string{"recipe_2"}}, "REF_NOT_FOUND", ""},
		"an unknown kind":          {recordStepResult, map[string]any{"step": 1, "kind": "GUESS"}, "GRAPHQL_VALIDATION_FAILED", ""},
	} {
		t.Run(name, func(t *testing.T) {
			c.vars["id"] = a.id
			res := s.Do(t, c.query, c.vars)
			require.Len(t, res.Errors, 1, "data: %s", res.Data)
			assert.Equal(t, c.code, res.Errors[0].Code(), res.Errors[0].Message)
			if c.field != "" {
				assert.Equal(t, c.field, res.Errors[0].Extensions["field"])
			}
		})
	}
	assert.Equal(t, before, events(), "bad input changes nothing")
}

func asAny(records []map[string]any) []any {
	out := make([]any, len(records))
	for i, r := range records {
		out[i] = r
	}
	return out
}

// A read's records are encoded once, for its step's data and its answer:
// the answer's bytes are still the Map scalar's (json.Marshal of the
// record: keys in order, HTML characters escaped, numbers as sent).
func TestARecordReadAnswersItsRecordsAsTheMapScalarWritesThem(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "raw-records")
	a.turn("what can I cook?")
	rec := map[string]any{
		"id": newUUID(), "name": "<b>Dal & Rice</b>", "notes": "café ☕ \u2028 \"quoted\"",
		"servings": json.Number("12345678901234567890"), "rating": json.Number("4.50"), "vegan": true, "source": nil,
		"tags": []any{"lentil", "rice"}, "meta": map[string]any{"z": 1, "a": "first"},
	}
	var out struct {
		RecordRead struct{ Records []json.RawMessage } `json:"recordRead"`
	}
	require.NoError(t, json.Unmarshal(a.do(recordRead, map[string]any{"table": "recipes", "records": []any{rec}, "step": 1}), &out))
	require.Len(t, out.RecordRead.Records, 1)
	assert.Equal(t, `{"id":"recipe_1","meta":{"a":"first","z":1},"name":"\u003cb\u003eDal \u0026 Rice\u003c/b\u003e",`+
		`"notes":"café ☕ \u2028 \"quoted\"","rating":4.50,"servings":12345678901234567890,"source":null,"tags":["lentil","rice"],"vegan":true}`,
		string(out.RecordRead.Records[0]))

	step := a.describe(1, "READ", "Find recipes")
	var stored []any
	require.NoError(t, json.Unmarshal([]byte(`[`+string(out.RecordRead.Records[0])+`]`), &stored))
	assert.Equal(t, stored, step.Data, "the step holds the record the answer gave")
}
