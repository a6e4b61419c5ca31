package graph_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

const (
	closeTurn = `mutation($id: ID!, $m: String!, $summary: ExecutionSummaryInput, $closing: [ClosingWriteInput!]) {
  endTurn(input: {sessionID: $id, assistantMessage: $m, summary: $summary, closing: $closing}) {
    turn { number status } closing { records refs } } }`
	// turnRecord is everything a turn's writes leave on a session: refs
	// with their artifacts, step results, turns, counts and summaries,
	// events, and what each node's build shows.
	turnRecord = `query($id: ID!) { session(id: $id) {
  currentTurn tokenCount reasoningSummary
  refs(first: 100) { edges { node { ` + refFields + ` } } }
  stepResults(first: 20) { edges { node { turn step kind description data refs itemCount } } }
  turns(first: 10) { edges { node { number userMessage assistantMessage assistantSummary userTokens assistantTokens status
    executionSummary { decision goal phase steps { step kind description outcome } } } } }
  events(first: 50) { edges { node { sequence kind payload } } }
  think: context(node: THINK) { text }
  act: context(node: ACT) { text }
  reply: context(node: REPLY) { text }
  messages: context(node: MESSAGES) { text }
} }`
)

// closingTurn is a turn's closing writes as an agent runtime sends them
// after its reply: the recipe generated last turn saved (a promotion), the
// meal plans read for the reply, a task deleted, a generated shopping list
// and the description of the read step.
func closingTurn(recipe, plan1, plan2, task string) []map[string]any {
	return []map[string]any{
		{"created": map[string]any{"entityType": "recipe", "entityID": recipe, "genRef": "gen_recipe_1", "step": 1}},
		{"read": map[string]any{"table": "meal_plans", "step": 2, "records": []any{
			map[string]any{"id": plan1, "date": "2026-12-01", "meal_type": "dinner", "recipe_id": recipe},
			map[string]any{"id": plan2, "date": "2026-12-02", "meal_type": "dinner", "recipe_id": recipe},
		}}},
		{"deleted": map[string]any{"entityType": "task", "entityIDs": []any{task}, "step": 3}},
		{"generated": map[string]any{"entityType": "recipe", "content": map[string]any{"name": "Leek Soup", "servings": 4}, "step": 4}},
		{"stepResult": map[string]any{"step": 2, "kind": "READ", "description": "Read this week's plans"}},
	}
}

// separateCall is the call that does a closing write alone.
func separateCall(a *agent, c map[string]any) {
	for kind, in := range c {
		vars := map[string]any{"in": withSession(in.(map[string]any), a.id)}
		switch kind {
		case "created":
			a.do(`mutation($in: RecordCreatedInput!) { recordCreated(input: $in) { ref { ref } } }`, vars)
		case "read":
			a.do(`mutation($in: RecordReadInput!) { recordRead(input: $in) { records } }`, vars)
		case "deleted":
			a.do(`mutation($in: RecordDeletedInput!) { recordDeleted(input: $in) { refs { ref } } }`, vars)
		case "generated":
			a.do(`mutation($in: RecordGeneratedInput!) { recordGenerated(input: $in) { ref { ref } } }`, vars)
		case "stepResult":
			a.do(`mutation($in: RecordStepResultInput!) { recordStepResult(input: $in) { stepResult { step } } }`, vars)
		}
	}
}

func withSession(in map[string]any, id string) map[string]any {
	out := map[string]any{"sessionID": id}
	for k, v := range in {
		out[k] = v
	}
	return out
}

// firstTurn begins a session's first turn, generates a recipe in it, ends
// it, and begins the second.
func firstTurn(a *agent) {
	a.do(beginTurn, map[string]any{"m": "suggest a soup"})
	a.do(`mutation($id: ID!) { recordGenerated(input: {sessionID: $id, entityType: "recipe", step: 1,
	  content: {name: "Leek and Potato Soup", servings: 2}}) { ref { ref } } }`, nil)
	a.do(endTurnWithSummary, map[string]any{"m": "Here is a leek and potato soup.", "summary": exchangeSummary(0)})
	a.do(beginTurn, map[string]any{"m": "save it and plan it for this week"})
}

// sameRecord reads both sessions' records with the session's own opening
// event's payload (its external key) left out.
func sameRecord(t *testing.T, s *apitest.Server, want, got *agent) (map[string]any, map[string]any) {
	t.Helper()
	read := func(a *agent) map[string]any {
		var out struct{ Session map[string]any }
		s.MustDo(t, turnRecord, map[string]any{"id": a.id}, &out)
		delete(out.Session["events"].(map[string]any)["edges"].([]any)[0].(map[string]any)["node"].(map[string]any), "payload")
		return out.Session
	}
	return read(want), read(got)
}

func TestClosingWritesRecordWhatTheSeparateCallsRecord(t *testing.T) {
	s := apitest.New(t)
	separate, together := newAgent(t, s, "separate"), newAgent(t, s, "together")
	recipe, plan1, plan2, task := newUUID(), newUUID(), newUUID(), newUUID()
	closing := closingTurn(recipe, plan1, plan2, task)
	summary := exchangeSummary(1)

	firstTurn(separate)
	before := s.Statements()
	for _, c := range closing {
		separateCall(separate, c)
	}
	separate.do(endTurnWithSummary, map[string]any{"m": "Saved, and planned for Monday and Tuesday.", "summary": summary})
	separateTrips := s.Statements() - before

	firstTurn(together)
	before = s.Statements()
	out := decode[struct {
		EndTurn struct {
			Turn struct {
				Number int
				Status string
			}
			Closing []struct {
				Records []map[string]any
				Refs    []string
			}
		}
	}](t, together.do(closeTurn, map[string]any{"m": "Saved, and planned for Monday and Tuesday.", "summary": summary, "closing": closing}))
	togetherTrips := s.Statements() - before

	assert.Equal(t, 2, out.EndTurn.Turn.Number)
	assert.Equal(t, "COMPLETED", out.EndTurn.Turn.Status)
	require.Len(t, out.EndTurn.Closing, 5)
	assert.Equal(t, []string{"gen_recipe_1"}, out.EndTurn.Closing[0].Refs, "the generated recipe, saved, keeps its ref")
	assert.Equal(t, []string{"meal_plan_1", "meal_plan_2"}, out.EndTurn.Closing[1].Refs[:2])
	require.Len(t, out.EndTurn.Closing[1].Records, 2)
	assert.Equal(t, "meal_plan_1", out.EndTurn.Closing[1].Records[0]["id"], "records come back translated")
	assert.Equal(t, "gen_recipe_1", out.EndTurn.Closing[1].Records[0]["recipe_id"], "the saved recipe's id is its ref")
	assert.Equal(t, []string{"task_1"}, out.EndTurn.Closing[2].Refs)
	assert.Equal(t, []string{"gen_recipe_2"}, out.EndTurn.Closing[3].Refs, "numbered after the first turn's gen ref")

	want, got := sameRecord(t, s, separate, together)
	assert.Equal(t, want, got, "the same refs, artifacts, steps, turns, events and builds")
	kinds := []string{}
	for _, e := range got["events"].(map[string]any)["edges"].([]any) {
		kinds = append(kinds, e.(map[string]any)["node"].(map[string]any)["kind"].(string))
	}
	assert.Equal(t, []string{"session.opened", "turn.began", "artifact.generated", "turn.ended", "turn.began",
		"ref.promoted", "refs.read", "refs.deleted", "artifact.generated", "step.recorded", "turn.ended"}, kinds)
	assert.Less(t, togetherTrips, separateTrips, "one transaction: one BEGIN, one lock, one COMMIT")
	// Each write's batches (internal/store); together, each closing write's
	// statements go with the next one's reads (store.Tx.Flush). They were
	// 22 and 15 with internal/pipedb.
	assert.Equal(t, int64(16), separateTrips, "round trips of the separate calls")
	assert.Equal(t, int64(11), togetherTrips, "round trips of the closing writes with endTurn")
	t.Logf("round trips: separate %d, together %d", separateTrips, togetherTrips)
}

func TestARefusedClosingWriteRefusesTheWholeTurnEnd(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "refused")
	firstTurn(a)
	var before struct{ Session map[string]any }
	s.MustDo(t, turnRecord, map[string]any{"id": a.id}, &before)

	recipe, plan1, plan2, task := newUUID(), newUUID(), newUUID(), newUUID()
	closing := closingTurn(recipe, plan1, plan2, task)
	// The last write names a type the domain does not have: the four
	// before it, and the turn's end, must not land either.
	closing[4] = map[string]any{"created": map[string]any{"entityType": "spaceship", "entityID": newUUID()}}
	assert.Equal(t, "UNKNOWN_ENTITY_TYPE", a.code(closeTurn, map[string]any{"m": "Saved.", "closing": closing}))
	// A write that names two calls, or none, is refused before anything runs.
	assert.Equal(t, "BAD_USER_INPUT", a.code(closeTurn, map[string]any{"m": "Saved.", "closing": []map[string]any{
		{"created": closing[0]["created"], "deleted": closing[2]["deleted"]}}}))
	assert.Equal(t, "BAD_USER_INPUT", a.code(closeTurn, map[string]any{"m": "Saved.", "closing": []map[string]any{{}}}))

	var after struct{ Session map[string]any }
	s.MustDo(t, turnRecord, map[string]any{"id": a.id}, &after)
	assert.Equal(t, before.Session, after.Session, "nothing of the refused request landed")

	// Without a turn open there is nothing to close, and nothing is written.
	a.do(closeTurn, map[string]any{"m": "Saved.", "closing": closingTurn(recipe, plan1, plan2, task)})
	assert.Equal(t, "NO_OPEN_TURN", a.code(closeTurn, map[string]any{"m": "again", "closing": closingTurn(recipe, plan1, plan2, task)[1:2]}))
}
