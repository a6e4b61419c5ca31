package graph_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

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
