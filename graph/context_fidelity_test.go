package graph_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// sectionText is the text of one titled section of a build, without its
// title; "" when the build has no such section.
func sectionText(text, title string) string {
	_, after, found := strings.Cut(text, "## "+title+"\n")
	if !found {
		return ""
	}
	body, _, _ := strings.Cut(after, "\n\n")
	return body
}

// quietTurns ends the open turn and runs turns from..to, each saying only
// its number.
func (a *agent) quietTurns(from, to int) {
	a.t.Helper()
	for n := from; n <= to; n++ {
		a.turn(fmt.Sprintf("turn %d", n))
	}
}

// TestUnderstandShowsEveryRegisteredEntity: the Satay read in turn 1 is
// still in UNDERSTAND's registry table at turn 6 and at turn 7, and its
// turn's annotation names it while that turn is among the five shown.
// Understand curates the whole registry: an entity it cannot see is one
// it cannot keep.
func TestUnderstandShowsEveryRegisteredEntity(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "satay")
	a.turn("show me the satay")
	a.read("recipes", map[string]any{"id": newUUID(), "name": "Satay", "cuisine": "thai"})
	a.quietTurns(2, 6)

	conversation := func(from, to int, entities map[int]string) string {
		var lines []string
		for n := from; n <= to; n++ {
			user := fmt.Sprintf("turn %d", n)
			if n == 1 {
				user = "show me the satay"
			}
			lines = append(lines, fmt.Sprintf("Turn %d — User: %s", n, user), fmt.Sprintf("Turn %d — Assistant: ok", n))
			if e, ok := entities[n]; ok {
				lines = append(lines, "  Entities: "+e)
			}
		}
		return strings.Join(lines, "\n")
	}
	const header = "| Ref | Type | Label | Last Action | Created | Last Ref |\n| --- | --- | --- | --- | --- | --- |\n"
	satay := "| recipe_1 | recipe | Satay | read | T1 | T1 |"

	b := a.context("UNDERSTAND", nil)
	assert.Equal(t, "## Current message\nturn 6\n\n"+
		"## Recent conversation\n"+conversation(1, 5, map[int]string{1: "recipe_1: Satay (read)"})+"\n\n"+
		"## Entity registry\n"+header+satay+"\n\n", b.Text)

	// A read in this turn: the build after it (patched from the one
	// before) still lists the older entity.
	a.read("recipes", map[string]any{"id": newUUID(), "name": "Laksa", "cuisine": "malay"})
	b = a.context("UNDERSTAND", nil)
	laksa := "| recipe_2 | recipe | Laksa | read | T6 | T6 |"
	assert.Equal(t, header+laksa+"\n"+satay, sectionText(b.Text, "Entity registry"))

	// Turn 1 is no longer among the five shown; its entity stays in the table.
	a.quietTurns(7, 7)
	b = a.context("UNDERSTAND", nil)
	assert.Equal(t, conversation(2, 6, map[int]string{6: "recipe_2: Laksa (read)"}), sectionText(b.Text, "Recent conversation"))
	assert.Equal(t, header+laksa+"\n"+satay, sectionText(b.Text, "Entity registry"))
}

// TestAGeneratedRefSavedThisTurnIsReadFromTheDatabase: once recordCreated
// saved gen_recipe_1, its row is in the runtime's database, so a read of it
// goes there (readRefs leaves it to the database), as the filter for it
// does (translateFilters gives its UUID): the artifact answers reads only
// while the ref is unsaved.
func TestAGeneratedRefSavedThisTurnIsReadFromTheDatabase(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "saved-read")
	a.turn("make me a cod recipe and save it")
	require.Equal(t, "gen_recipe_1", a.generate("recipe", map[string]any{"name": "Simple Cod", "instructions": "Bake."}))

	type readOut struct {
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
	}
	read := func() readOut {
		return decode[readOut](t, rawQuery(t, s, a.id, `query($id: ID!) { session(id: $id) {
			translateFilters(table: "recipes", filters: [{field: "id", op: "eq", value: "gen_recipe_1"}]) { filters { field op value } pendingRefs }
			readRefs(refs: ["gen_recipe_1"]) { records fromDatabase } } }`))
	}
	unsaved := read()
	assert.Equal(t, []string{"gen_recipe_1"}, unsaved.Session.TranslateFilters.PendingRefs)
	assert.Equal(t, []map[string]any{{"id": "gen_recipe_1", "name": "Simple Cod", "instructions": "Bake."}}, unsaved.Session.ReadRefs.Records)
	assert.Empty(t, unsaved.Session.ReadRefs.FromDatabase)

	saved := newUUID()
	a.do(`mutation($id: ID!, $e: UUID!) { recordCreated(input: {sessionID: $id, entityType: "recipe", entityID: $e, label: "Simple Cod"}) { promoted } }`,
		map[string]any{"e": saved})
	got := read()
	require.Len(t, got.Session.TranslateFilters.Filters, 1)
	f := got.Session.TranslateFilters.Filters[0]
	assert.Equal(t, []any{"id", "eq", saved}, []any{f.Field, f.Op, f.Value}, "the filter asks the database for the saved row")
	assert.Empty(t, got.Session.TranslateFilters.PendingRefs)
	assert.Empty(t, got.Session.ReadRefs.Records, "saved: the database row is the truth, not the artifact")
	assert.Equal(t, []string{"gen_recipe_1"}, got.Session.ReadRefs.FromDatabase)
}

// TestThinkLeavesOutWhatATurnDidNotSay: THINK's reasoning trace shows of a
// turn only what its execution summary says: no dashes, no empty quotes
// for what was never given, and a turn that said nothing is its number.
func TestThinkLeavesOutWhatATurnDidNotSay(t *testing.T) {
	s := apitest.New(t)
	a := newAgent(t, s, "quiet")
	updateTurn := func(summary map[string]any) {
		a.do(`mutation($id: ID!, $s: ExecutionSummaryInput!) { updateTurn(input: {sessionID: $id, summary: $s}) { turn { number } } }`, map[string]any{"s": summary})
	}
	a.turn("hello") // turn 1 ends with no summary
	a.turn("find me a soup")
	updateTurn(map[string]any{"goal": "Find a soup", "steps": []any{map[string]any{"step": 1, "kind": "read"}}})
	a.turn("and a bread?")
	updateTurn(map[string]any{"decision": "plan_direct", "userExpressed": "likes rye",
		"steps": []any{map[string]any{"step": 1, "description": "Read breads", "outcome": "2 items"}}})
	a.turn("thanks")

	b := a.context("THINK", nil)
	assert.Equal(t, strings.Join([]string{
		`Turn 2: goal "Find a soup"`,
		`  Step 1 (read)`,
		`Turn 3: decision plan_direct, user expressed "likes rye"`,
		`  Step 1: Read breads → 2 items`,
		`Earlier turns:`,
		`  T1`,
	}, "\n"), sectionText(b.Text, "Reasoning trace"))
}
