package graph_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

const factTrace = `query($id: ID!, $fact: FactInput!) { node(id: $id) { ... on Session {
  factTrace(fact: $fact, nodes: [THINK]) { more
    receipts { receiptID turn node held }
    firstLoss { heldIn { receiptID turn } lostIn { receiptID turn } diff { lines { change text } } } } } } }`

type factTraceOut struct {
	Node struct {
		FactTrace struct {
			More     bool `json:"more"`
			Receipts []struct {
				ReceiptID string `json:"receiptID"`
				Turn      int    `json:"turn"`
				Node      string `json:"node"`
				Held      *bool  `json:"held"`
			} `json:"receipts"`
			FirstLoss *struct {
				HeldIn struct {
					ReceiptID string `json:"receiptID"`
					Turn      int    `json:"turn"`
				} `json:"heldIn"`
				LostIn struct {
					ReceiptID string `json:"receiptID"`
					Turn      int    `json:"turn"`
				} `json:"lostIn"`
				Diff struct {
					Lines []struct {
						Change string `json:"change"`
						Text   string `json:"text"`
					} `json:"lines"`
				} `json:"diff"`
			} `json:"firstLoss"`
		} `json:"factTrace"`
	} `json:"node"`
}

const sessionsHoldingFact = `query($fact: FactInput!, $after: String) {
  sessionsHoldingFact(fact: $fact, after: $after) { sessions { externalKey } scanned next } }`

// TestOneQueryAnswersWhenTheAgentLostAFact: "why did the agent forget the
// user's peanut allergy by turn 7" is one query: THINK held it for turns
// 1 to 3, lost it at turn 4, and the diff of turn 3 against turn 4 shows
// the line that went. Across sessions, one query names the sessions whose
// THINK prompts ever held it, within the caller's tenant.
func TestOneQueryAnswersWhenTheAgentLostAFact(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "peanut")
	for _, m := range []string{"I have a peanut allergy", "plan dinners", "with rice", "and Friday?", "and Saturday?", "and Sunday?", "any dessert?"} {
		a.turn(m)
		a.recordContext("THINK")
	}
	other := newAgent(t, s, "lunches")
	other.turn("plan lunches")
	other.recordContext("THINK")

	out := decode[factTraceOut](t, a.do(factTrace, map[string]any{"fact": map[string]any{"text": "PEANUT allergy"}})).Node.FactTrace
	require.Len(t, out.Receipts, 7)
	var held []bool
	for i, r := range out.Receipts {
		assert.Equal(t, i+1, r.Turn)
		assert.Equal(t, "THINK", r.Node)
		require.NotNil(t, r.Held)
		held = append(held, *r.Held)
	}
	assert.Equal(t, []bool{true, true, true, false, false, false, false}, held)
	require.NotNil(t, out.FirstLoss)
	assert.Equal(t, 3, out.FirstLoss.HeldIn.Turn)
	assert.Equal(t, 4, out.FirstLoss.LostIn.Turn)
	assert.Contains(t, out.FirstLoss.Diff.Lines, struct {
		Change string `json:"change"`
		Text   string `json:"text"`
	}{"REMOVED", "Turn 1 — User: I have a peanut allergy"})
	assert.False(t, out.More)

	type searchOut struct {
		SessionsHoldingFact struct {
			Sessions []struct {
				ExternalKey string `json:"externalKey"`
			} `json:"sessions"`
			Scanned int     `json:"scanned"`
			Next    *string `json:"next"`
		} `json:"sessionsHoldingFact"`
	}
	var found searchOut
	s.MustDo(t, sessionsHoldingFact, map[string]any{"fact": map[string]any{"text": "peanut"}}, &found)
	require.Len(t, found.SessionsHoldingFact.Sessions, 1)
	assert.Equal(t, "peanut", found.SessionsHoldingFact.Sessions[0].ExternalKey)
	assert.Equal(t, 8, found.SessionsHoldingFact.Scanned)
	assert.Nil(t, found.SessionsHoldingFact.Next)

	var elsewhere searchOut
	s.WithKey(s.NewKey(t, "READER", "globex")).MustDo(t, sessionsHoldingFact, map[string]any{"fact": map[string]any{"text": "peanut"}}, &elsewhere)
	assert.Empty(t, elsewhere.SessionsHoldingFact.Sessions, "another tenant's receipts are not read")
	assert.Equal(t, 0, elsewhere.SessionsHoldingFact.Scanned)

	assert.Equal(t, "INVALID_CURSOR", s.ErrorCode(t, sessionsHoldingFact, map[string]any{"fact": map[string]any{"text": "peanut"}, "after": "not-a-cursor"}))
	assert.Equal(t, "BAD_USER_INPUT", s.ErrorCode(t, sessionsHoldingFact, map[string]any{"fact": map[string]any{"text": "peanut", "ref": "recipe_1"}}))
	assert.Equal(t, "BAD_USER_INPUT", s.ErrorCode(t, sessionsHoldingFact, map[string]any{"fact": map[string]any{}}))
}

// TestARefIsHeldWhereverABuildNamesIt: UNDERSTAND names a ref in its
// registry table and under its turn, in plain words, not in backticks; each
// of its builds from turn 1 to 7 holds recipe_1, long after the ref left
// the active tier, and no build lost it. A build that names only recipe_10
// and gen_recipe_1 does not hold recipe_1.
func TestARefIsHeldWhereverABuildNamesIt(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "satay")
	a.turn("show me the satay")
	a.read("recipes", map[string]any{"id": newUUID(), "name": "Satay"})
	a.recordContext("UNDERSTAND")
	for n := 2; n <= 7; n++ {
		a.turn("and now?")
		a.recordContext("UNDERSTAND")
	}
	other := newAgent(t, s, "noodles")
	other.turn("compare recipe_10 with gen_recipe_1")
	other.recordContext("UNDERSTAND")

	const understandTrace = `query($id: ID!, $fact: FactInput!) { node(id: $id) { ... on Session {
	  factTrace(fact: $fact, nodes: [UNDERSTAND]) { more receipts { turn held } firstLoss { lostIn { turn } } } } } }`
	type traceOut struct {
		Node struct {
			FactTrace struct {
				Receipts []struct {
					Turn int   `json:"turn"`
					Held *bool `json:"held"`
				} `json:"receipts"`
				FirstLoss *struct{} `json:"firstLoss"`
			} `json:"factTrace"`
		} `json:"node"`
	}
	held := func(a *agent) []bool {
		out := decode[traceOut](t, a.do(understandTrace, map[string]any{"fact": map[string]any{"ref": "recipe_1"}})).Node.FactTrace
		var held []bool
		for _, r := range out.Receipts {
			require.NotNil(t, r.Held, "turn %d: the text was kept", r.Turn)
			held = append(held, *r.Held)
		}
		assert.Nil(t, out.FirstLoss)
		return held
	}
	assert.Equal(t, []bool{true, true, true, true, true, true, true}, held(a))
	assert.Equal(t, []bool{false}, held(other), "recipe_10 and gen_recipe_1 are other refs")

	var found struct {
		SessionsHoldingFact struct {
			Sessions []struct {
				ExternalKey string `json:"externalKey"`
			} `json:"sessions"`
			Scanned int `json:"scanned"`
		} `json:"sessionsHoldingFact"`
	}
	s.MustDo(t, `query($fact: FactInput!) { sessionsHoldingFact(fact: $fact, node: UNDERSTAND) { sessions { externalKey } scanned } }`,
		map[string]any{"fact": map[string]any{"ref": "recipe_1"}}, &found)
	require.Len(t, found.SessionsHoldingFact.Sessions, 1)
	assert.Equal(t, "satay", found.SessionsHoldingFact.Sessions[0].ExternalKey)
	assert.Equal(t, 8, found.SessionsHoldingFact.Scanned)
}
