package graph_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
)

func TestBuildsStayWithinBudgetInPriorityOrder(t *testing.T) {
	s := apitest.New(t)
	a := kitchenSession(t, s)
	// Make the session heavy: many active refs and a long history summary.
	records := make([]map[string]any, 300)
	for i := range records {
		records[i] = map[string]any{"id": newUUID(), "name": strings.Repeat("Slow-cooked stew with root vegetables ", 3), "cuisine": "british"}
	}
	a.read("recipes", records...)

	for _, node := range []string{"UNDERSTAND", "THINK", "ACT", "REPLY"} {
		full := a.context(node, map[string]any{"tokenBudget": 200000})
		order := map[string]int{}
		for i, sec := range full.Sections {
			order[sec.Name] = i
		}
		for _, budget := range []int{500, 2000, 8000} {
			b := a.context(node, map[string]any{"tokenBudget": budget})
			assert.Equal(t, budget, b.Budget)
			assert.LessOrEqual(t, b.TokenCount, budget, "%s at %d", node, budget)
			require.NotEmpty(t, b.Sections, "%s at %d keeps its first sections", node, budget)
			sum := 0
			last := -1
			for _, sec := range b.Sections {
				sum += sec.TokenCount
				assert.Greater(t, order[sec.Name], last, "%s at %d: sections keep their priority order", node, budget)
				last = order[sec.Name]
			}
			assert.LessOrEqual(t, sum, budget)
			if full.TokenCount > budget {
				assert.NotEmpty(t, b.Notes, "%s at %d says what it cut", node, budget)
			}
		}
	}
}

// The sliding window over a long conversation: a 100K-token
// model, a 5K system prompt, messages 1-10 of 6K tokens each and messages
// 11-20 of 3K each (95K, over the 80K allowed). The window keeps the system
// message and every newest message that fits in the 80K: the ten of 3K and
// seven of 6K (77K), where the example's "last N" showed only the ten.
func TestSlidingWindowKeepsTheNewestMessagesThatFit(t *testing.T) {
	s := apitest.New(t)
	var opened openedSession
	s.MustDo(t, openSession, map[string]any{"in": map[string]any{"tenant": "acme", "externalKey": "seed-004",
		"tokenizer": "chars4", "systemPrompt": strings.Repeat("s", 20000)}}, &opened)
	a := &agent{t: t, s: s, id: opened.OpenSession.Session.ID}
	for turn := 1; turn <= 10; turn++ {
		size := 24000 // 6K tokens by the 4-characters rule
		if turn > 5 {
			size = 12000 // 3K tokens
		}
		a.do(`mutation($id: ID!, $m: String!) { beginTurn(input: {sessionID: $id, userMessage: $m}) { turn { number } } }`, map[string]any{"m": strings.Repeat("u", size)})
		a.do(`mutation($id: ID!, $m: String!) { endTurn(input: {sessionID: $id, assistantMessage: $m}) { turn { number } } }`, map[string]any{"m": strings.Repeat("a", size)})
	}

	b := a.context("MESSAGES", map[string]any{"modelLimit": 100000})
	require.Len(t, b.Messages, 19, "system, notice, and the seventeen newest messages that fit")
	assert.Equal(t, "system", b.Messages[0].Role)
	assert.Equal(t, 5000, b.Messages[0].TokenCount)
	assert.Equal(t, "system", b.Messages[1].Role)
	assert.Equal(t, "[Note: 3 older messages truncated to stay within token limit]", b.Messages[1].Content)
	kept := 0
	for i, m := range b.Messages[2:] {
		want := 3000
		if i < 7 {
			want = 6000
		}
		assert.Equal(t, want, m.TokenCount, "message %d kept", i)
		kept += m.TokenCount
	}
	assert.Equal(t, 77000, b.Messages[0].TokenCount+kept, "one more 6K message would pass 80K")
	assert.Equal(t, 77000+b.Messages[1].TokenCount, b.TokenCount, "the notice is counted too")
	assert.Equal(t, 80000, b.Budget, "80% of the model limit")
	assert.Equal(t, 1, b.TruncatedTurns)

	// Under the limit nothing is cut.
	whole := a.context("MESSAGES", map[string]any{"modelLimit": 200000})
	assert.Len(t, whole.Messages, 21)
	assert.Equal(t, 95000, whole.TokenCount)

	// SUMMARY puts the history summary where the cut turns were.
	a.do(`mutation($id: ID!) { updateSession(input: {id: $id, historySummary: "The user pasted long logs."}) { session { id } } }`, nil)
	sum := a.context("MESSAGES", map[string]any{"modelLimit": 100000, "strategy": "SUMMARY"})
	assert.Equal(t, "Previous conversation summary: The user pasted long logs.", sum.Messages[1].Content)
	assert.Len(t, sum.Messages, 12)

	// A reset keeps the system prompt, clears the history.
	a.do(`mutation($id: ID!) { resetConversation(input: {sessionID: $id}) { session { id tokenCount } } }`, nil)
	after := a.context("MESSAGES", map[string]any{"modelLimit": 100000})
	require.Len(t, after.Messages, 1)
	assert.Equal(t, 5000, after.Messages[0].TokenCount)
	a.do(`mutation($id: ID!) { resetConversation(input: {sessionID: $id, keepSystemPrompt: false}) { session { id } } }`, nil)
	assert.Empty(t, a.context("MESSAGES", nil).Messages)
}

func TestWorkingMemoryAndTurnBookkeeping(t *testing.T) {
	s := apitest.New(t)
	a := kitchenSession(t, s)
	out := decode[struct {
		Session struct {
			TokenCount       int    `json:"tokenCount"`
			ReasoningSummary string `json:"reasoningSummary"`
			WorkingMemory    struct {
				TurnCount       int              `json:"turnCount"`
				Summary         string           `json:"summary"`
				ShouldSummarize bool             `json:"shouldSummarize"`
				RecentEntities  []map[string]any `json:"recentEntities"`
			} `json:"workingMemory"`
			Every3 struct {
				ShouldSummarize bool `json:"shouldSummarize"`
			} `json:"every3"`
			Turns struct {
				Edges []struct {
					Node struct {
						Number           int    `json:"number"`
						UserTokens       int    `json:"userTokens"`
						AssistantTokens  int    `json:"assistantTokens"`
						AssistantSummary string `json:"assistantSummary"`
					} `json:"node"`
				} `json:"edges"`
			} `json:"turns"`
		} `json:"session"`
	}](t, a.do(`query($id: ID!) { session(id: $id) { tokenCount reasoningSummary
		workingMemory { turnCount summary shouldSummarize recentEntities { entityType ref label turn } }
		every3: workingMemory(everyNTurns: 3) { shouldSummarize }
		turns(first: 10, orderBy: [{field: NUMBER}]) { edges { node { number userTokens assistantTokens assistantSummary } } } } }`, nil))
	se := out.Session
	wm := se.WorkingMemory
	assert.Equal(t, 6, wm.TurnCount)
	assert.False(t, wm.ShouldSummarize, "turn 6 is not a multiple of 5")
	assert.True(t, se.Every3.ShouldSummarize, "turn 6 is a multiple of 3")
	assert.Contains(t, wm.Summary, "planning dinners")
	require.Len(t, wm.RecentEntities, 11, "all eleven refs (fewer than 20)")
	assert.Equal(t, float64(6), wm.RecentEntities[0]["turn"], "most recent first")

	sumTokens := 0
	for _, e := range se.Turns.Edges {
		assert.Positive(t, e.Node.UserTokens)
		sumTokens += e.Node.UserTokens + e.Node.AssistantTokens
	}
	assert.Equal(t, sumTokens, se.TokenCount, "the session's count is the sum of its turns'")
	assert.Equal(t, "Generated recipe(s): Coconut Rice. [Content archived]", se.Turns.Edges[2].Node.AssistantSummary)
	assert.Equal(t, "Saved. You now have these recipes: (6 items: Thai Curry, Lemon Pasta, Butter Chicken +3 more)", se.Turns.Edges[4].Node.AssistantSummary)
	assert.True(t, strings.HasSuffix(se.Turns.Edges[3].Node.AssistantSummary, "... [content continues in step results]"))
	assert.Equal(t, "T1: plan_direct — List recipes [exploring]; Read recipes: 3 items\n"+
		"T2: plan_direct — Show pantry [exploring]; Read inventory: 2 items\n"+
		"T3: propose — Suggest a rice recipe [narrowing]; Generate a recipe: gen_recipe_1", se.ReasoningSummary,
		"turns older than the last two are compressed, once each")
}

// A build reads a fixed number of statements, whatever the session's size,
// and writes nothing.
func TestBuildsReadAFixedNumberOfStatements(t *testing.T) {
	s := apitest.New(t)
	a := kitchenSession(t, s)
	counts := func() map[string]int64 {
		out := map[string]int64{}
		for _, node := range []string{"UNDERSTAND", "THINK", "ACT", "REPLY", "MESSAGES"} {
			before := s.Statements()
			a.context(node, nil)
			out[node] = s.Statements() - before
		}
		return out
	}
	small := counts()
	for i := 0; i < 5; i++ {
		a.turn(fmt.Sprintf("more %d", i))
		records := make([]map[string]any, 50)
		for j := range records {
			records[j] = map[string]any{"id": newUUID(), "name": fmt.Sprintf("Recipe %d-%d", i, j)}
		}
		a.readStep("recipes", 1, records...) // a step result per turn too
	}
	events := s.Client.Event.Query().CountX(access.System(t.Context()))
	large := counts()
	assert.Equal(t, small, large, "statements per build do not grow with refs, turns and step results")
	const auth = apitest.AuthStatements
	assert.Equal(t, map[string]int64{"UNDERSTAND": 3 + auth, "THINK": 3 + auth, "ACT": 4 + auth, "REPLY": 4 + auth, "MESSAGES": 2 + auth}, large,
		"session, refs, turns; ACT and REPLY also the step results they show (their artifacts come joined to the refs); MESSAGES session and turns")
	assert.Equal(t, events, s.Client.Event.Query().CountX(access.System(t.Context())), "builds write nothing")
}

// TestACutSectionLeavesNothingOfLowerPriority sweeps the budget of every
// node over the kitchen session, from the least a request may ask to
// enough for all: the sections kept are always the first ones of the
// unbounded build, in its order, whole but for the last kept. Nothing of
// a lower priority survives while a higher one is cut or dropped.
func TestACutSectionLeavesNothingOfLowerPriority(t *testing.T) {
	s := apitest.New(t)
	a := kitchenSession(t, s)
	for _, node := range []string{"UNDERSTAND", "THINK", "ACT", "REPLY"} {
		full := a.context(node, map[string]any{"tokenBudget": 200000})
		var order []string
		for _, sec := range full.Sections {
			order = append(order, sec.Name)
		}
		for budget := 50; budget <= full.TokenCount+10; budget += 7 {
			b := a.context(node, map[string]any{"tokenBudget": budget})
			assert.LessOrEqual(t, b.TokenCount, budget, "%s at %d", node, budget)
			kept := []string{}
			for i, sec := range b.Sections {
				kept = append(kept, sec.Name)
				if i < len(b.Sections)-1 {
					assert.False(t, sec.Truncated, "%s at %d: %s was cut, yet a section below it stayed", node, budget, sec.Name)
				}
			}
			require.LessOrEqual(t, len(kept), len(order), "%s at %d", node, budget)
			assert.Equal(t, order[:len(kept)], kept, "%s at %d: the sections kept are the first ones", node, budget)
			if len(kept) < len(order) {
				assert.NotEmpty(t, b.Notes, "%s at %d says what it dropped", node, budget)
			}
		}
	}
}
