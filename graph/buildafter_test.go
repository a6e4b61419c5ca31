package graph_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
)

// everyBuild selects each node's build, as a write's answer or a session's
// field; $o are the builds' options.
const everyBuild = `understand: context(node: UNDERSTAND, options: $o) { ...build }
  think: context(node: THINK, options: $o) { ...build }
  act: context(node: ACT, options: $o) { ...build }
  reply: context(node: REPLY, options: $o) { ...build }
  messages: context(node: MESSAGES, options: $o) { ...build }`

const buildFields = `fragment build on ContextBuild { text tokenCount budget tokenizer
  sections { name tokenCount truncated } tiers { active generated retained } }`

// buildAfterWrite is one write of the grid: the mutation and its input.
type buildAfterWrite struct {
	mutation, input string
	in              map[string]any
	options         map[string]any
}

// The builds a write's answer carries are byte for byte the builds a
// separate query makes right after the same write on a session of the same
// history, for every node, over a grid of writes (new records, records read
// again, a step, foreign keys waiting for labels, an update, generated
// content, turns ended and begun, options); and the receipts a runtime's
// reads record, and the events, are the same both ways. An admin's builds
// record nothing: there each write's build follows the one before it by a
// single event.
func TestABuildInAWritesAnswerIsTheBuildASeparateReadMakes(t *testing.T) {
	s := apitest.New(t, func(c *app.Config) { c.RecordContexts = []string{"UNDERSTAND", "THINK", "ACT", "REPLY", "MESSAGES"} })
	client := s.WithKey(s.NewKey(t, "CLIENT", "acme"))
	for _, by := range []struct {
		name string
		s    *apitest.Server
	}{{"runtime", client}, {"admin", s}} {
		t.Run(by.name, func(t *testing.T) { buildsAfterWrites(t, s, by.s) })
	}
}

func buildsAfterWrites(t *testing.T, s, by *apitest.Server) {
	separate, inAnswer := newAgent(t, s, t.Name()+"/separate"), newAgent(t, s, t.Name()+"/in-answer")
	separate.s, inAnswer.s = by, by

	recipe, leeks, soup, plan := newUUID(), newUUID(), newUUID(), newUUID()
	read := func(table string, step any, records ...map[string]any) buildAfterWrite {
		in := map[string]any{"table": table, "records": records}
		if step != nil {
			in["step"] = step
		}
		return buildAfterWrite{mutation: "recordRead", input: "RecordReadInput", in: in}
	}
	grid := []buildAfterWrite{
		read("recipes", nil, map[string]any{"id": recipe, "name": "Leek Gratin", "cuisine": "french", "total_time": 40}),
		read("recipes", 1, map[string]any{"id": recipe, "name": "Leek Gratin", "cuisine": "french"},
			map[string]any{"id": soup, "name": "Leek Soup", "cuisine": "french", "total_time": 30}),
		read("meal_plans", 2, map[string]any{"id": plan, "date": "2026-12-01", "meal_type": "dinner", "recipe_id": newUUID()}),
		{mutation: "recordUpdated", input: "RecordUpdatedInput", in: map[string]any{"table": "recipes", "step": 3,
			"records": []map[string]any{{"id": soup, "name": "Leek and Potato Soup", "cuisine": "french", "total_time": 35}}}},
		read("ingredients", nil, map[string]any{"id": leeks, "name": "Leeks"}),
		read("recipes", 4, map[string]any{"id": recipe, "name": "Leek Gratin"}),
	}
	options := []map[string]any{nil, {"turnsWindow": 1, "tokenBudget": 400}, {"tokenizer": "chars4"}}

	for turn := range 3 {
		for _, a := range []*agent{separate, inAnswer} {
			a.turn(fmt.Sprintf("turn %d: what can I cook with leeks?", turn+1))
			if turn == 1 { // content the LLM generated, shown by ACT and REPLY
				a.do(`mutation($id: ID!) { recordGenerated(input: {sessionID: $id, entityType: "recipe", step: 5,
				  content: {name: "Leek Tart", servings: 4, recipe_id: "`+recipe+`"}}) { ref { ref } } }`, nil)
			}
		}
		for i, w := range grid {
			o := options[turn] // the same within a turn, so that a build can follow the one before it
			vars := map[string]any{"in": withSession(w.in, separate.id), "o": o}
			separate.do(fmt.Sprintf(`mutation($in: %s!) { %s(input: $in) { records } }`, w.input, w.mutation), vars)
			want := decode[struct{ Session map[string]json.RawMessage }](t, separate.do(
				`query($id: ID!, $o: ContextOptions) { session(id: $id) { `+everyBuild+` } } `+buildFields, map[string]any{"o": o}))

			vars = map[string]any{"in": withSession(w.in, inAnswer.id), "o": o}
			got := decode[map[string]map[string]json.RawMessage](t, inAnswer.do(fmt.Sprintf(
				`mutation($in: %s!, $o: ContextOptions) { %s(input: $in) { records `+everyBuild+` } } `+buildFields,
				w.input, w.mutation), vars))[w.mutation]
			// Read again after the answer, as a dashboard would: the build
			// the server remembers for the session as it is now.
			again := decode[struct{ Session map[string]json.RawMessage }](t, inAnswer.do(
				`query($id: ID!, $o: ContextOptions) { session(id: $id) { `+everyBuild+` } } `+buildFields, map[string]any{"o": o}))
			for _, node := range []string{"understand", "think", "act", "reply", "messages"} {
				require.NotEmpty(t, want.Session[node])
				assert.Equal(t, string(want.Session[node]), string(got[node]), "turn %d, write %d (%s), %s", turn+1, i, w.mutation, node)
				assert.Equal(t, string(want.Session[node]), string(again.Session[node]), "turn %d, write %d (%s), %s read again", turn+1, i, w.mutation, node)
			}
		}
	}

	wantRecord, gotRecord := sameRecord(t, s, separate, inAnswer)
	delete(wantRecord, "events")
	delete(gotRecord, "events")
	assert.Equal(t, wantRecord, gotRecord, "the same refs, steps, turns and builds")
	assert.Equal(t, eventsOf(t, s, separate.id), eventsOf(t, s, inAnswer.id), "the same events")
	receipts := func(a *agent) []string {
		var out []string
		for _, e := range receiptsOf(t, s, a.id).Session.ContextReceipts.Edges {
			require.NotNil(t, e.Node.Text)
			out = append(out, fmt.Sprintf("%s %d %s %s", e.Node.Node, e.Node.Turn, e.Node.TextSha256, *e.Node.Text))
		}
		// A request's builds run at once, each recording its own: their
		// order within the request is not the calls' order.
		slices.Sort(out)
		return out
	}
	wantReceipts := receipts(separate)
	if by != s {
		assert.NotEmpty(t, wantReceipts)
	}
	assert.Equal(t, wantReceipts, receipts(inAnswer), "a runtime's builds in a write's answer are recorded as its reads are")
}

// eventsOf lists a session's events after its opening as kind and payload,
// without receipts' ids; the receipts one request's builds record run at
// once, so each run of them is in sorted order.
func eventsOf(t *testing.T, s *apitest.Server, id string) []string {
	t.Helper()
	type edge struct {
		Node struct {
			Kind    string         `json:"kind"`
			Payload map[string]any `json:"payload"`
		} `json:"node"`
	}
	var edges []edge
	var after *string
	for {
		var out struct {
			Session struct {
				Events struct {
					Edges    []edge `json:"edges"`
					PageInfo struct {
						EndCursor   *string `json:"endCursor"`
						HasNextPage bool    `json:"hasNextPage"`
					} `json:"pageInfo"`
				} `json:"events"`
			} `json:"session"`
		}
		s.MustDo(t, `query($id: ID!, $after: Cursor) { session(id: $id) { events(first: 100, after: $after) {
		  edges { node { kind payload } } pageInfo { endCursor hasNextPage } } } }`, map[string]any{"id": id, "after": after}, &out)
		edges = append(edges, out.Session.Events.Edges...)
		if !out.Session.Events.PageInfo.HasNextPage {
			break
		}
		after = out.Session.Events.PageInfo.EndCursor
	}
	var events []string
	run := 0 // where the current run of receipts began
	for i, e := range edges[1:] {
		delete(e.Node.Payload, "receipt")
		p, err := json.Marshal(e.Node.Payload)
		require.NoError(t, err)
		events = append(events, e.Node.Kind+" "+string(p))
		if e.Node.Kind != "context.recorded" {
			run = i + 1
			continue
		}
		slices.Sort(events[run:])
	}
	return events
}

// A build in a write's answer reaches its statements in as few frames as a
// build of its own: the payload's resolver goes to the engine's Context
// with the session the write left.
func TestABuildInAWritesAnswerReachesItsSQLInAFewFrames(t *testing.T) {
	s, trace := tracedServer(t)
	a := kitchenSession(t, s)
	var text string
	trace.trace("recordRead with a build", func() {
		text = decode[struct {
			RecordRead struct{ Context struct{ Text string } }
		}](t, a.do(
			`mutation($id: ID!, $r: [Map!]!) { recordRead(input: {sessionID: $id, table: "recipes", records: $r, step: 1}) {
			  records context(node: THINK) { text } } }`, map[string]any{"r": []map[string]any{{"id": newUUID(), "name": "Dal Tadka"}}})).RecordRead.Context.Text
	})
	require.Contains(t, text, "Dal Tadka")

	built := false
	for _, rt := range trace.check(t, "recordRead with a build") {
		built = built || slices.Contains(rt.frames, "sessiongraph/graph.(*recordReadPayloadResolver).Context")
	}
	assert.True(t, built, "the payload's build sent no statement")
}
