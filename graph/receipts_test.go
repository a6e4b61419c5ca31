package graph_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
)

const recordContext = `mutation($id: ID!, $node: ContextNode!) { recordContext(input: {sessionID: $id, node: $node}) {
  build { text tokenCount budget tokenizer sections { name tokenCount truncated } tiers { active generated retained } notes truncatedTurns }
  receipt { ...Receipt } } }
fragment Receipt on ContextReceipt { id turn node eventSequence budget tokenizer tokenCount truncatedTurns notes text textSha256
  sections { name tokenCount truncated } tiers { active generated retained } }`

type receiptOut struct {
	ID             string   `json:"id"`
	Turn           int      `json:"turn"`
	Node           string   `json:"node"`
	EventSequence  int      `json:"eventSequence"`
	Budget         int      `json:"budget"`
	Tokenizer      string   `json:"tokenizer"`
	TokenCount     int      `json:"tokenCount"`
	TruncatedTurns int      `json:"truncatedTurns"`
	Notes          []string `json:"notes"`
	Text           *string  `json:"text"`
	TextSha256     string   `json:"textSha256"`
	Sections       []struct {
		Name       string `json:"name"`
		TokenCount int    `json:"tokenCount"`
		Truncated  bool   `json:"truncated"`
	} `json:"sections"`
	Tiers map[string][]string `json:"tiers"`
}

type recordedOut struct {
	Build   contextOut `json:"build"`
	Receipt receiptOut `json:"receipt"`
}

func (a *agent) recordContext(node string) recordedOut {
	a.t.Helper()
	return decode[struct {
		RecordContext recordedOut `json:"recordContext"`
	}](a.t, a.do(recordContext, map[string]any{"node": node})).RecordContext
}

const receiptDiff = `query($from: ID!, $to: ID!) { contextReceiptDiff(from: $from, to: $to) {
  from { id } to { id } textCompared
  tiers { tier entered left } sections { name before after delta } lines { change text } } }`

type diffOut struct {
	TextCompared bool `json:"textCompared"`
	Tiers        []struct {
		Tier    string   `json:"tier"`
		Entered []string `json:"entered"`
		Left    []string `json:"left"`
	} `json:"tiers"`
	Sections []struct {
		Name   string `json:"name"`
		Before *int   `json:"before"`
		After  *int   `json:"after"`
		Delta  int    `json:"delta"`
	} `json:"sections"`
	Lines []struct {
		Change string `json:"change"`
		Text   string `json:"text"`
	} `json:"lines"`
}

// receiptSession scripts two turns of the kitchen: two curries read and
// THINK recorded; then a dessert read, a curry retained, THINK recorded
// again.
func receiptSession(t *testing.T, s *apitest.Server) (*agent, recordedOut, recordedOut) {
	t.Helper()
	a := newAgent(t, s, "receipts")
	a.turn("find Indian recipes")
	a.read("recipes", map[string]any{"id": newUUID(), "name": "Dal Tadka"}, map[string]any{"id": newUUID(), "name": "Chana Masala"})
	first := a.recordContext("THINK")
	a.turn("and a dessert")
	a.read("recipes", map[string]any{"id": newUUID(), "name": "Kheer"})
	a.do(`mutation($id: ID!) { retainRef(input: {sessionID: $id, ref: "recipe_2", reason: "the user's favourite"}) { ref { ref } } }`, nil)
	second := a.recordContext("THINK")
	return a, first, second
}

// A recorded build is the build the runtime sends, kept whole: node, turn,
// budget, tokenizer, each section's tokens, each tier's refs, what was cut,
// the text and its hash; a turn lists its receipts, and contextReceipt and
// node find one by id. Recording is a write of the session, with its event.
func TestARecordedBuildIsTheBuildSent(t *testing.T) {
	s := apitest.New(t)
	a, first, second := receiptSession(t, s)

	for _, r := range []recordedOut{first, second} {
		b, rec := r.Build, r.Receipt
		assert.Equal(t, "THINK", rec.Node)
		assert.Equal(t, b.Budget, rec.Budget)
		assert.Equal(t, b.TokenCount, rec.TokenCount)
		require.NotNil(t, rec.Text)
		assert.Equal(t, b.Text, *rec.Text)
		sum := sha256.Sum256([]byte(b.Text))
		assert.Equal(t, hex.EncodeToString(sum[:]), rec.TextSha256)
		require.Len(t, rec.Sections, len(b.Sections))
		for i, sec := range b.Sections {
			assert.Equal(t, sec.Name, rec.Sections[i].Name)
			assert.Equal(t, sec.TokenCount, rec.Sections[i].TokenCount)
		}
		assert.Equal(t, b.Tiers, rec.Tiers)
		assert.Equal(t, "cl100k_base", rec.Tokenizer)
	}
	assert.Equal(t, 1, first.Receipt.Turn)
	assert.Equal(t, 2, second.Receipt.Turn)
	assert.Greater(t, second.Receipt.EventSequence, first.Receipt.EventSequence)

	turns := decode[struct {
		Session struct {
			Turns struct {
				Edges []struct {
					Node struct {
						Number   int          `json:"number"`
						Receipts []receiptOut `json:"receipts"`
					} `json:"node"`
				} `json:"edges"`
			} `json:"turns"`
			Events struct {
				Edges []struct {
					Node struct {
						Kind    string         `json:"kind"`
						Payload map[string]any `json:"payload"`
					} `json:"node"`
				} `json:"edges"`
			} `json:"events"`
		} `json:"session"`
	}](t, mustData(t, s, `query($id: ID!) { session(id: $id) { turns(first: 5) { edges { node { number receipts { ...Receipt } } } }
		events(last: 1) { edges { node { kind payload } } } } }
		fragment Receipt on ContextReceipt { id turn node eventSequence budget tokenizer tokenCount truncatedTurns notes text textSha256
		sections { name tokenCount truncated } tiers { active generated retained } }`, map[string]any{"id": a.id}))
	require.Len(t, turns.Session.Turns.Edges, 2)
	assert.Equal(t, []receiptOut{first.Receipt}, turns.Session.Turns.Edges[0].Node.Receipts)
	assert.Equal(t, []receiptOut{second.Receipt}, turns.Session.Turns.Edges[1].Node.Receipts)
	last := turns.Session.Events.Edges[0].Node
	assert.Equal(t, "context.recorded", last.Kind)
	assert.Equal(t, second.Receipt.ID, last.Payload["receipt"])

	byID := decode[struct {
		ContextReceipt receiptOut `json:"contextReceipt"`
		Node           receiptOut `json:"node"`
	}](t, mustData(t, s, `query($r: ID!) { contextReceipt(id: $r) { ...Receipt } node(id: $r) { ...Receipt }
		} fragment Receipt on ContextReceipt { id turn node eventSequence budget tokenizer tokenCount truncatedTurns notes text textSha256
		sections { name tokenCount truncated } tiers { active generated retained } }`, map[string]any{"r": first.Receipt.ID}))
	assert.Equal(t, first.Receipt, byID.ContextReceipt)
	assert.Equal(t, first.Receipt, byID.Node)

	// Named with its session, the same receipt; named with another
	// session, none.
	other := decode[struct {
		OpenSession struct{ Session struct{ ID string } } `json:"openSession"`
	}](t, mustData(t, s, `mutation { openSession(input: {tenant: "acme", externalKey: "another"}) { session { id } } }`, nil)).OpenSession.Session.ID
	const bySession = `query($r: ID!, $s: ID!) { contextReceipt(id: $r, sessionID: $s) { ...Receipt }
		} fragment Receipt on ContextReceipt { id turn node eventSequence budget tokenizer tokenCount truncatedTurns notes text textSha256
		sections { name tokenCount truncated } tiers { active generated retained } }`
	named := decode[struct {
		ContextReceipt receiptOut `json:"contextReceipt"`
	}](t, mustData(t, s, bySession, map[string]any{"r": first.Receipt.ID, "s": a.id}))
	assert.Equal(t, first.Receipt, named.ContextReceipt)
	assert.Equal(t, "NOT_FOUND", s.ErrorCode(t, bySession, map[string]any{"r": first.Receipt.ID, "s": other}))
}

// The diff of the scripted session's two THINK receipts is what the
// script did: Kheer (recipe_3) entered the active tier and nothing left
// it; every section's tokens are reported before and after; the text
// gained Kheer's line and lost no curry.
func TestTheDiffOfTwoReceiptsIsWhatChanged(t *testing.T) {
	s := apitest.New(t)
	a, first, second := receiptSession(t, s)
	d := decode[struct {
		ContextReceiptDiff diffOut `json:"contextReceiptDiff"`
	}](t, a.do(receiptDiff, map[string]any{"from": first.Receipt.ID, "to": second.Receipt.ID})).ContextReceiptDiff

	require.True(t, d.TextCompared)
	tiers := map[string][2][]string{}
	for _, td := range d.Tiers {
		tiers[td.Tier] = [2][]string{td.Entered, td.Left}
	}
	assert.Equal(t, map[string][2][]string{
		"active":    {{"recipe_3"}, {}},
		"generated": {{}, {}},
		"retained":  {{}, {}},
	}, tiers)

	before := map[string]int{}
	for _, sec := range first.Receipt.Sections {
		before[sec.Name] = sec.TokenCount
	}
	require.NotEmpty(t, d.Sections)
	for _, sec := range d.Sections {
		require.NotNil(t, sec.After, sec.Name)
		if b, ok := before[sec.Name]; ok {
			assert.Equal(t, b, *sec.Before)
			assert.Equal(t, *sec.After-b, sec.Delta)
		}
	}
	var added, removed []string
	for _, l := range d.Lines {
		switch l.Change {
		case "ADDED":
			added = append(added, l.Text)
		case "REMOVED":
			removed = append(removed, l.Text)
		}
	}
	assert.True(t, containsLine(added, "recipe_3", "Kheer"), "added: %q", added)
	assert.False(t, containsLine(removed, "Dal Tadka") && !containsLine(added, "Dal Tadka"), "Dal Tadka did not leave: removed %q", removed)
	assert.False(t, containsLine(removed, "Chana Masala") && !containsLine(added, "Chana Masala"), "Chana Masala did not leave: removed %q", removed)

	// A receipt compared with itself has no change.
	same := decode[struct {
		ContextReceiptDiff diffOut `json:"contextReceiptDiff"`
	}](t, a.do(receiptDiff, map[string]any{"from": first.Receipt.ID, "to": first.Receipt.ID})).ContextReceiptDiff
	assert.Empty(t, same.Lines)
	for _, sec := range same.Sections {
		assert.Zero(t, sec.Delta)
	}
}

func containsLine(lines []string, parts ...string) bool {
	for _, l := range lines {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			return true
		}
	}
	return false
}

// With -receipt-hash-only a receipt keeps the text's SHA-256 and not the
// text, and a diff says it could not compare the texts.
func TestAHashOnlyReceiptKeepsNoText(t *testing.T) {
	s := apitest.New(t, func(c *app.Config) { c.ReceiptHashOnly = true })
	a, first, second := receiptSession(t, s)
	assert.Nil(t, first.Receipt.Text)
	sum := sha256.Sum256([]byte(first.Build.Text))
	assert.Equal(t, hex.EncodeToString(sum[:]), first.Receipt.TextSha256)
	d := decode[struct {
		ContextReceiptDiff diffOut `json:"contextReceiptDiff"`
	}](t, a.do(receiptDiff, map[string]any{"from": first.Receipt.ID, "to": second.Receipt.ID})).ContextReceiptDiff
	assert.False(t, d.TextCompared)
	assert.Empty(t, d.Lines)
	assert.NotEmpty(t, d.Tiers)
}

// Receipts keep to their tenant, a diff compares one node of one session,
// and an expired session records nothing.
func TestReceiptsRefuseWhatTheyCannotDo(t *testing.T) {
	s := apitest.New(t)
	a, first, _ := receiptSession(t, s)
	act := a.recordContext("ACT")
	assert.Equal(t, "BAD_USER_INPUT", a.code(receiptDiff, map[string]any{"from": first.Receipt.ID, "to": act.Receipt.ID}))
	other := newAgent(t, s, "receipts-other")
	other.turn("hello")
	elsewhere := other.recordContext("THINK")
	assert.Equal(t, "BAD_USER_INPUT", a.code(receiptDiff, map[string]any{"from": first.Receipt.ID, "to": elsewhere.Receipt.ID}))
	assert.Equal(t, "NOT_FOUND", a.code(receiptDiff, map[string]any{"from": first.Receipt.ID, "to": newUUID()}))

	globex := s.WithKey(s.NewKey(t, "CLIENT", "globex"))
	assert.Equal(t, "NOT_FOUND", globex.ErrorCode(t, `query($r: ID!) { contextReceipt(id: $r) { id } }`, map[string]any{"r": first.Receipt.ID}))
	assert.Equal(t, "NOT_FOUND", globex.ErrorCode(t, receiptDiff, map[string]any{"from": first.Receipt.ID, "to": first.Receipt.ID}))
	assert.Equal(t, "NOT_FOUND", globex.ErrorCode(t, `query($r: ID!) { node(id: $r) { id } }`, map[string]any{"r": first.Receipt.ID}))

	a.do(`mutation($id: ID!) { expireSession(input: {id: $id}) { session { id } } }`, nil)
	assert.Equal(t, "SESSION_EXPIRED", a.code(recordContext, map[string]any{"node": "THINK"}))
}

// mustData runs an operation that must succeed and returns its data, for
// answers that carry ids (agent.do refuses UUIDs, as the LLM's data must).
func mustData(t *testing.T, s *apitest.Server, query string, vars map[string]any) json.RawMessage {
	t.Helper()
	res := s.Do(t, query, vars)
	require.Empty(t, res.Errors)
	return res.Data
}

const sessionReceipts = `query($id: ID!) { session(id: $id) {
  contextReceipts(first: 20, orderBy: [{field: CREATED_AT}]) { edges { node { id node turn text textSha256 } } }
  events(first: 100, where: {kind: "context.recorded"}) { totalCount } } }`

type sessionReceiptsOut struct {
	Session struct {
		ContextReceipts struct {
			Edges []struct {
				Node receiptOut `json:"node"`
			} `json:"edges"`
		} `json:"contextReceipts"`
		Events struct {
			TotalCount int `json:"totalCount"`
		} `json:"events"`
	} `json:"session"`
}

func receiptsOf(t *testing.T, s *apitest.Server, id string) sessionReceiptsOut {
	t.Helper()
	var out sessionReceiptsOut
	s.MustDo(t, sessionReceipts, map[string]any{"id": id}, &out)
	return out
}

// With -record-contexts, a runtime's (CLIENT key's) read of a named node is
// recorded as recordContext would record it, once per prompt: the same
// text read again in the turn is the same prompt. An admin or a reader
// looking at a build sends no prompt and records nothing, and a node not
// named is not recorded.
func TestConfiguredNodesRecordTheBuildsARuntimeReads(t *testing.T) {
	s := apitest.New(t, func(c *app.Config) { c.RecordContexts = []string{"THINK"} })
	a := newAgent(t, s, "auto-receipts")
	a.s = s.WithKey(s.NewKey(t, "CLIENT", "acme"))
	a.turn("find Indian recipes")
	a.read("recipes", map[string]any{"id": newUUID(), "name": "Dal Tadka"})
	first := a.context("THINK", nil)
	again := a.context("THINK", nil)
	require.Equal(t, first.Text, again.Text)
	a.context("ACT", nil)

	a.read("recipes", map[string]any{"id": newUUID(), "name": "Chana Masala"})
	byAdmin := s.WithKey(s.Key)
	byReader := s.WithKey(s.NewKey(t, "READER", "acme"))
	for _, looker := range []*apitest.Server{byAdmin, byReader} {
		res := looker.Do(t, `query($id: ID!) { session(id: $id) { context(node: THINK) { text } } }`, map[string]any{"id": a.id})
		require.Empty(t, res.Errors)
	}
	require.Len(t, receiptsOf(t, s, a.id).Session.ContextReceipts.Edges, 1, "only the runtime's first read is recorded so far")

	second := a.context("THINK", nil)
	require.NotEqual(t, first.Text, second.Text)
	got := receiptsOf(t, s, a.id)
	require.Len(t, got.Session.ContextReceipts.Edges, 2)
	for i, want := range []string{first.Text, second.Text} {
		r := got.Session.ContextReceipts.Edges[i].Node
		assert.Equal(t, "THINK", r.Node)
		assert.Equal(t, 1, r.Turn)
		require.NotNil(t, r.Text)
		assert.Equal(t, want, *r.Text)
	}
	assert.Equal(t, 2, got.Session.Events.TotalCount, "each receipt is one committed change with its event")

	// A build watched live (contextUpdated) is not a prompt sent.
	watch := a.s.DialWS(t, nil)
	watch.Subscribe(`subscription($id: ID!) { contextUpdated(sessionID: $id, node: THINK) { text } }`, map[string]any{"id": a.id})
	require.Equal(t, "next", watch.Read(10*time.Second).Type)
	a.read("recipes", map[string]any{"id": newUUID(), "name": "Kheer"})
	require.Equal(t, "next", watch.Read(10*time.Second).Type, "rebuilt after the read")
	assert.Len(t, receiptsOf(t, s, a.id).Session.ContextReceipts.Edges, 2, "nothing recorded for the builds watched")
}

// -receipt-text-retention: the reaper clears a receipt's text once it is
// older than the retention and keeps its hash, which still proves what was
// sent; younger receipts keep their text.
func TestTheReaperClearsReceiptTextsPastTheirRetention(t *testing.T) {
	s := apitest.New(t, func(c *app.Config) { c.ReceiptTextRetention = time.Hour })
	a, first, second := receiptSession(t, s)
	_, err := s.DB.ExecContext(context.Background(),
		`UPDATE context_receipts SET created_at = now() - interval '2 hours' WHERE id = $1`, first.Receipt.ID)
	require.NoError(t, err)

	activity := func() string {
		var out struct {
			Session struct {
				LastActiveAt string `json:"lastActiveAt"`
				Events       struct {
					TotalCount int `json:"totalCount"`
				} `json:"events"`
			} `json:"session"`
		}
		s.MustDo(t, `query($id: ID!) { session(id: $id) { lastActiveAt events(first: 1, where: {kind: "receipts.texts_cleared"}) { totalCount } } }`,
			map[string]any{"id": a.id}, &out)
		return fmt.Sprintf("%s %d", out.Session.LastActiveAt, out.Session.Events.TotalCount)
	}
	before := activity()
	reaped, err := s.Engine.Sessions.ReapOnce(access.System(context.Background()))
	require.NoError(t, err)
	assert.Equal(t, 1, reaped.TextsCleared)
	lastActive, _, _ := strings.Cut(before, " ")
	assert.Equal(t, lastActive+" 1", activity(), "one event for the session, which is not its activity")

	got := receiptsOf(t, s, a.id).Session.ContextReceipts.Edges
	require.Len(t, got, 2)
	assert.Nil(t, got[0].Node.Text, "past the retention")
	assert.Equal(t, first.Receipt.TextSha256, got[0].Node.TextSha256)
	require.NotNil(t, got[1].Node.Text, "within the retention")
	assert.Equal(t, *second.Receipt.Text, *got[1].Node.Text)
}
