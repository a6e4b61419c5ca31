package graph_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/tokenizer"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

const contextQuery = `query($id: ID!, $node: ContextNode!, $options: ContextOptions) {
  session(id: $id) { context(node: $node, options: $options) {
    node text tokenCount budget tokenizer truncatedTurns notes
    sections { name tokenCount truncated }
    messages { role content tokenCount }
    tiers { active generated retained }
  } }
}`

type contextOut struct {
	Node           string   `json:"node"`
	Text           string   `json:"text"`
	TokenCount     int      `json:"tokenCount"`
	Budget         int      `json:"budget"`
	Tokenizer      string   `json:"tokenizer"`
	TruncatedTurns int      `json:"truncatedTurns"`
	Notes          []string `json:"notes"`
	Sections       []struct {
		Name       string `json:"name"`
		TokenCount int    `json:"tokenCount"`
		Truncated  bool   `json:"truncated"`
	} `json:"sections"`
	Messages []struct {
		Role       string `json:"role"`
		Content    string `json:"content"`
		TokenCount int    `json:"tokenCount"`
	} `json:"messages"`
	Tiers map[string][]string `json:"tiers"`
}

func (a *agent) context(node string, options map[string]any) contextOut {
	a.t.Helper()
	out := decode[struct {
		Session struct {
			Context contextOut `json:"context"`
		} `json:"session"`
	}](a.t, a.do(contextQuery, map[string]any{"node": node, "options": options}))
	return out.Session.Context
}

// kitchenSession scripts six turns of the kitchen domain: reads,
// FK enrichment, generation, a full read, a save, retention, and a sixth
// turn still open while Think plans.
func kitchenSession(t *testing.T, s *apitest.Server) *agent {
	t.Helper()
	var opened openedSession
	s.MustDo(t, openSession, map[string]any{"in": map[string]any{"tenant": "acme", "externalKey": "kitchen-6",
		"systemPrompt": "You are Alfred, a kitchen assistant. Use refs such as recipe_1, never ids."}}, &opened)
	a := &agent{t: t, s: s, id: opened.OpenSession.Session.ID}
	curry, pasta, chicken, rice, coconut, riceIng := newUUID(), newUUID(), newUUID(), newUUID(), newUUID(), newUUID()
	updateTurn := func(summary map[string]any) {
		a.do(`mutation($id: ID!, $s: ExecutionSummaryInput!) { updateTurn(input: {sessionID: $id, summary: $s}) { turn { number } } }`, map[string]any{"s": summary})
	}
	endTurn := func(message string) {
		a.do(`mutation($id: ID!, $m: String!) { endTurn(input: {sessionID: $id, assistantMessage: $m}) { turn { number } } }`, map[string]any{"m": message})
	}
	begin := func(message string) {
		a.do(`mutation($id: ID!, $m: String!) { beginTurn(input: {sessionID: $id, userMessage: $m}) { turn { number } } }`, map[string]any{"m": message})
	}

	begin("what recipes do i have?")
	a.read("recipes",
		map[string]any{"id": curry, "name": "Thai Curry", "cuisine": "thai"},
		map[string]any{"id": pasta, "name": "Lemon Pasta", "cuisine": "italian"},
		map[string]any{"id": chicken, "name": "Butter Chicken", "cuisine": "indian"})
	updateTurn(map[string]any{"decision": "plan_direct", "goal": "List recipes", "phase": "exploring",
		"steps": []any{map[string]any{"step": 1, "kind": "read", "description": "Read recipes", "outcome": "3 items"}}})
	endTurn("You have three recipes: Thai Curry, Lemon Pasta and Butter Chicken.")

	begin("what's in my pantry?")
	inv := a.read("inventory",
		map[string]any{"id": rice, "name": "jasmine rice", "quantity": 2, "unit": "kg", "ingredient_id": riceIng},
		map[string]any{"id": coconut, "name": "coconut milk", "quantity": 3, "unit": "can"})
	a.do(`mutation($id: ID!, $records: [Map!]) { applyEnrichment(input: {sessionID: $id, table: "inventory", records: $records, labels: [{ref: "ingredient_1", label: "rice"}]}) { records } }`,
		map[string]any{"records": inv.RecordRead.Records})
	updateTurn(map[string]any{"decision": "plan_direct", "goal": "Show pantry", "phase": "exploring", "userExpressed": "cooks with what is at home",
		"steps": []any{map[string]any{"step": 1, "kind": "read", "description": "Read inventory", "outcome": "2 items"}}})
	endTurn("Your pantry has jasmine rice (2 kg) and coconut milk (3 cans).")

	begin("suggest a new recipe with rice")
	a.do(`mutation($id: ID!) { recordGenerated(input: {sessionID: $id, entityType: "recipe", step: 1, content: {
		name: "Coconut Rice", servings: 2, ingredients: ["jasmine rice", "coconut milk", "salt"], instructions: "Rinse the rice, simmer in coconut milk for 15 minutes."}}) { ref { ref } } }`, nil)
	a.do(`mutation($id: ID!) { retainRef(input: {sessionID: $id, ref: "recipe_1", reason: "User compares new ideas with their Thai Curry"}) { ref { ref } } }`, nil)
	updateTurn(map[string]any{"decision": "propose", "goal": "Suggest a rice recipe", "phase": "narrowing",
		"steps":    []any{map[string]any{"step": 1, "kind": "generate", "description": "Generate a recipe", "outcome": "gen_recipe_1"}},
		"curation": map[string]any{"retained": []any{map[string]any{"ref": "recipe_1", "reason": "User compares new ideas with their Thai Curry"}}}})
	endTurn("Here is Coconut Rice.\nServings: 2\nIngredients: jasmine rice, coconut milk, salt\nInstructions: rinse the rice, then simmer it in coconut milk for 15 minutes.")

	begin("show me the butter chicken")
	a.read("recipes", map[string]any{"id": chicken, "name": "Butter Chicken", "cuisine": "indian", "instructions": "Marinate the chicken in yoghurt and spices, grill it, then simmer in a tomato and butter sauce."})
	updateTurn(map[string]any{"decision": "plan_direct", "goal": "Show a recipe", "phase": "exploring",
		"steps": []any{map[string]any{"step": 1, "kind": "read", "description": "Read Butter Chicken in full", "outcome": "1 item"}}})
	endTurn("Butter Chicken takes about an hour. " + strings.Repeat("First marinate the chicken in yoghurt with garam masala, cumin and chilli; then grill it until charred; finally simmer it in a sauce of tomatoes, butter and cream. ", 3))

	begin("save the coconut rice")
	a.do(`mutation($id: ID!, $e: UUID!) { recordCreated(input: {sessionID: $id, entityType: "recipe", entityID: $e, label: "Coconut Rice"}) { ref { ref } } }`,
		map[string]any{"e": newUUID()})
	updateTurn(map[string]any{"decision": "plan_direct", "goal": "Save the recipe", "phase": "executing",
		"steps": []any{map[string]any{"step": 1, "kind": "write", "description": "Save Coconut Rice", "outcome": "saved as gen_recipe_1"}}})
	endTurn("Saved. You now have these recipes:\n- Thai Curry\n- Lemon Pasta\n- Butter Chicken\n- Coconut Rice\n- Pancakes\n- Dal")

	begin("plan dinners for the week")
	a.read("meal_plans",
		map[string]any{"id": newUUID(), "date": "2026-01-12", "meal_type": "dinner", "recipe_id": pasta},
		map[string]any{"id": newUUID(), "date": "2026-01-13", "meal_type": "dinner", "recipe_id": newUUID()})
	a.do(`mutation($id: ID!) { recordGenerated(input: {sessionID: $id, entityType: "meal_plan", step: 2, content: {
		date: "2026-01-14", meal_type: "dinner", recipe_id: "gen_recipe_1"}}) { ref { ref } } }`, nil)
	updateTurn(map[string]any{"decision": "propose", "goal": "Plan weekday dinners", "phase": "narrowing",
		"steps":    []any{map[string]any{"step": 1, "kind": "read", "description": "Read meal plans", "outcome": "2 items"}},
		"curation": map[string]any{"retained": []any{map[string]any{"ref": "recipe_1", "reason": "User compares new ideas with their Thai Curry"}}, "demoted": []any{"inv_2"}}})
	a.do(`mutation($id: ID!) { updateSession(input: {id: $id, engagementSummary: "Weeknight cooking from the pantry.",
		historySummary: "The user listed recipes, checked the pantry, saved Coconut Rice and is planning dinners.",
		pendingClarification: {question: "Do you want fish on Friday?"}}) { session { id } } }`, nil)
	return a
}

// TestContextBuildsMatchTheirGoldenFiles scripts the kitchen session and
// compares each build with its golden file, once with an ADMIN key and once
// with a CLIENT key of the session's tenant: every read and write of the
// script then also runs through the tenant interceptors, with the same result.
func TestContextBuildsMatchTheirGoldenFiles(t *testing.T) {
	for _, role := range []string{"ADMIN", "CLIENT"} {
		t.Run(role, func(t *testing.T) {
			s := apitest.New(t)
			if role == "CLIENT" {
				s = s.WithKey(s.NewKey(t, "CLIENT", "acme"))
			}
			a := kitchenSession(t, s)
			for _, node := range []string{"UNDERSTAND", "THINK", "ACT", "REPLY", "MESSAGES"} {
				t.Run(node, func(t *testing.T) {
					b := a.context(node, nil)
					assert.LessOrEqual(t, b.TokenCount, b.Budget)
					counter, err := tokenizer.Get(tokenizer.Name(b.Tokenizer))
					require.NoError(t, err)
					if node != "MESSAGES" { // MESSAGES counts message contents, stored per turn
						assert.Equal(t, counter.Count(b.Text), b.TokenCount, "the reported count is the tokenizer's count of the text")
					}
					golden(t, strings.ToLower(node), render(b))
				})
			}
		})
	}
}

// render is the golden form of a build: its text, then its accounting.
func render(b contextOut) string {
	var sb strings.Builder
	sb.WriteString(b.Text)
	fmt.Fprintf(&sb, "\n\n=== %s: %d of %d tokens (%s), %d turns truncated\n", b.Node, b.TokenCount, b.Budget, b.Tokenizer, b.TruncatedTurns)
	for _, sec := range b.Sections {
		fmt.Fprintf(&sb, "section %s: %d tokens, truncated=%v\n", sec.Name, sec.TokenCount, sec.Truncated)
	}
	for _, m := range b.Messages {
		fmt.Fprintf(&sb, "message %s: %d tokens\n", m.Role, m.TokenCount)
	}
	tiers, _ := json.Marshal(b.Tiers)
	fmt.Fprintf(&sb, "tiers %s\nnotes %q\n", tiers, b.Notes)
	return sb.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "context", name+".txt")
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run `go test ./graph -run Golden -update` to create it")
	assert.Equal(t, string(want), got, "a format change must be a deliberate diff of %s", path)
}
