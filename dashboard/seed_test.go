package dashboard_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// runtime drives one session through the public API, as an agent runtime
// would: what the dashboard then shows is what any client wrote.
type agent struct {
	t  testing.TB
	s  *apitest.Server
	id string
}

func (r *agent) do(query string, vars map[string]any) json.RawMessage {
	r.t.Helper()
	if vars == nil {
		vars = map[string]any{}
	}
	vars["id"] = r.id
	res := r.s.Do(r.t, query, vars)
	require.Empty(r.t, res.Errors, "operation failed")
	return res.Data
}

// openSession opens a session through the API and returns its id.
func openSession(t testing.TB, s *apitest.Server, in map[string]any) string {
	t.Helper()
	var out struct {
		OpenSession struct{ Session struct{ ID string } } `json:"openSession"`
	}
	s.MustDo(t, `mutation($in: OpenSessionInput!) { openSession(input: $in) { session { id } } }`, map[string]any{"in": in}, &out)
	return out.OpenSession.Session.ID
}

func (r *agent) begin(message string) {
	r.t.Helper()
	r.do(`mutation($id: ID!, $m: String!) { beginTurn(input: {sessionID: $id, userMessage: $m}) { turn { number } } }`, map[string]any{"m": message})
}

func (r *agent) end(message string, summary map[string]any) {
	r.t.Helper()
	r.do(`mutation($id: ID!, $m: String!, $s: ExecutionSummaryInput) { endTurn(input: {sessionID: $id, assistantMessage: $m, summary: $s}) { turn { number } } }`,
		map[string]any{"m": message, "s": summary})
}

func (r *agent) read(table string, records ...map[string]any) {
	r.t.Helper()
	r.do(`mutation($id: ID!, $t: String!, $r: [Map!]!) { recordRead(input: {sessionID: $id, table: $t, records: $r, step: 1}) { refs { ref } } }`,
		map[string]any{"t": table, "r": records})
}

func (r *agent) generate(entityType string, content map[string]any) {
	r.t.Helper()
	r.do(`mutation($id: ID!, $t: String!, $c: Map!) { recordGenerated(input: {sessionID: $id, entityType: $t, content: $c, step: 2}) { ref { ref } } }`,
		map[string]any{"t": entityType, "c": content})
}

func (r *agent) retain(ref, reason string) {
	r.t.Helper()
	r.do(`mutation($id: ID!, $r: String!, $why: String!) { retainRef(input: {sessionID: $id, ref: $r, reason: $why}) { ref { ref } } }`,
		map[string]any{"r": ref, "why": reason})
}

// seedKitchen opens the session the browser test looks at: a
// kitchen conversation over four turns, with read, linked, generated and
// retained refs, a pending artifact and execution summaries. It also opens
// a handful of other sessions so that the list has something to sort.
func seedKitchen(t *testing.T, s *apitest.Server) string {
	t.Helper()
	for i, tenant := range []string{"acme", "globex", "acme", "initech", "globex", "acme"} {
		id := openSession(t, s, map[string]any{"tenant": tenant, "externalKey": fmt.Sprintf("support-%02d", i+1), "userID": fmt.Sprintf("user-%d", 10+i)})
		other := &agent{t: t, s: s, id: id}
		for n := range i % 3 {
			other.begin(fmt.Sprintf("question %d: what can I cook tonight with what is left in the fridge?", n+1))
			other.end("Here are three ideas from your inventory.", nil)
		}
	}

	r := &agent{t: t, s: s, id: openSession(t, s, map[string]any{
		"tenant": "acme", "externalKey": "kitchen-chat-7", "userID": "user-7",
		"systemPrompt": "You are a kitchen assistant. Refer to entities by their refs.",
	})}
	butter, curry, rice := uuid.NewString(), uuid.NewString(), uuid.NewString()

	r.begin("What chicken recipes do I have?")
	r.read("recipes",
		map[string]any{"id": butter, "name": "Butter Chicken", "cuisine": "Indian", "instructions": "Marinate, then simmer in the sauce."},
		map[string]any{"id": curry, "name": "Thai Green Curry", "cuisine": "Thai"})
	r.end("You have two: Butter Chicken (recipe_1) and Thai Green Curry (recipe_2).", map[string]any{
		"decision": "read", "goal": "list chicken recipes",
		"steps": []map[string]any{{"step": 1, "kind": "read", "description": "read recipes with chicken", "outcome": "2 recipes", "refs": []string{"recipe_1", "recipe_2"}}},
	})

	r.begin("Plan Monday dinner around the curry, and check the rice.")
	r.read("inventory", map[string]any{"id": rice, "name": "jasmine rice", "quantity": 2, "unit": "kg"})
	r.read("meal_plans",
		map[string]any{"id": uuid.NewString(), "date": "2026-01-12", "meal_type": "dinner", "recipe_id": curry},
		map[string]any{"id": uuid.NewString(), "date": "2026-01-13", "meal_type": "lunch", "recipe_id": uuid.NewString()})
	r.end("Monday dinner is Thai Green Curry; you have 2 kg of jasmine rice.", map[string]any{
		"decision": "plan", "goal": "plan Monday dinner", "phase": "planning",
		"steps": []map[string]any{
			{"step": 1, "kind": "read", "description": "check inventory for rice", "outcome": "2 kg", "refs": []string{"inv_1"}},
			{"step": 2, "kind": "read", "description": "read this week's meal plans", "outcome": "2 plans", "refs": []string{"meal_plan_1", "meal_plan_2"}},
		},
	})

	r.begin("Also make me a shopping list for the week.")
	r.generate("task", map[string]any{"title": "Shopping list for the week", "items": []string{"coconut milk", "green curry paste", "lime leaves"}})
	r.end("Here is a shopping list (gen_task_1): coconut milk, green curry paste, lime leaves. Shall I save it?", map[string]any{
		"decision": "generate", "goal": "shopping list", "userExpressed": "wants a weekly list",
		"steps": []map[string]any{{"step": 1, "kind": "generate", "description": "draft the shopping list", "outcome": "3 items", "refs": []string{"gen_task_1"}}},
	})

	r.begin("Yes, save it. And keep the butter chicken in mind for Friday.")
	r.retain("recipe_1", "user plans it for Friday")
	r.do(`mutation($id: ID!) { mentionEntity(input: {sessionID: $id, refs: ["inv_1", "meal_plan_1"]}) { refs { ref } } }`, nil)
	return r.id
}

// createKey makes an API key through the API, as an admin does.
func createKey(t *testing.T, s *apitest.Server, role, tenant string) string {
	t.Helper()
	var out struct {
		CreateAPIKey struct{ Key string } `json:"createAPIKey"`
	}
	s.MustDo(t, `mutation($in: CreateAPIKeyInput!) { createAPIKey(input: $in) { key } }`,
		map[string]any{"in": map[string]any{"name": role + " key for " + t.Name(), "role": role, "tenant": tenant}}, &out)
	require.NotEmpty(t, out.CreateAPIKey.Key)
	return out.CreateAPIKey.Key
}
