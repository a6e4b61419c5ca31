package contextbuild

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/tokenizer"
)

// endings are the awkward ways a section's last line can end: punctuation
// that BPE would glue to following newlines, code fences, tables, JSON,
// spaces, digits and non-Latin text.
var endings = []string{"done.", "| T3 |", "```", "}", "→ 5 items", "  ", "x\t", "2026-01-12", "ok!\"", "ünïcödé", "日本語", "[read:full] T3", "'s", "1234567"}

// TestSectionCountsAddUp proves the premise of Additive on random texts: the
// BPE count of the joined sections equals the sum of their counts.
func TestSectionCountsAddUp(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, name := range []tokenizer.Name{tokenizer.CL100K, tokenizer.O200K} {
		c, err := tokenizer.Get(name)
		require.NoError(t, err)
		for range 300 {
			var drafts []draft
			for s := range 1 + rng.IntN(5) {
				var lines []string
				for range 1 + rng.IntN(4) {
					lines = append(lines, strings.Repeat("word ", rng.IntN(6))+endings[rng.IntN(len(endings))])
				}
				drafts = append(drafts, section("s", "Section "+string(rune('A'+s)), lines...))
			}
			text, total, sections, _ := fit(drafts, 1_000_000, c)
			require.Len(t, sections, len(drafts))
			assert.Equal(t, c.Count(text), total, "%s: %q", name, text)
		}
	}
}

func TestFitStaysWithinBudget(t *testing.T) {
	for _, name := range []tokenizer.Name{tokenizer.CL100K, tokenizer.O200K, tokenizer.Chars4} {
		c, err := tokenizer.Get(name)
		require.NoError(t, err)
		lines := make([]string, 200)
		for i := range lines {
			lines[i] = "- `recipe_1`: Slow-cooked stew with root vegetables (recipe) [read:summary] T3"
		}
		for _, budget := range []int{30, 100, 500, 2000} {
			text, total, sections, notes := fit([]draft{section("a", "Active entities", lines...), section("b", "More", lines...)}, budget, c)
			assert.LessOrEqual(t, total, budget)
			assert.Equal(t, c.Count(text), total)
			if len(sections) > 0 {
				assert.True(t, sections[0].Truncated)
				assert.NotEmpty(t, notes)
			}
		}
	}
}

// TestACutSectionLeavesNothingBelowIt sweeps the budget from nothing to
// enough for all over sections in priority order, THINK's shape: whatever
// the budget, the sections kept are the first ones, whole but for the last
// kept; every section after a cut one is dropped, and a note says so.
func TestACutSectionLeavesNothingBelowIt(t *testing.T) {
	active := make([]string, 9)
	for i := range active {
		active[i] = "- `recipe_" + string(rune('1'+i)) + "`: Slow-cooked stew (recipe) [read:summary] T3"
	}
	drafts := []draft{
		section("engagement_summary", "Session", "Weeknight cooking from the pantry."),
		section("active_entities", "Active entities", active...),
		section("data_legends", "Data legends", "- recipe: [read:full] the whole recipe", "- inv: quantities are in the unit given"),
		section("conversation", "Conversation", "Turn 4 — User: show me the stew", "Turn 4 — Assistant: Here it is.", "Turn 5 — User (now): save it"),
		section("history_summary", "History summary", "The user listed recipes and is planning dinners."),
	}
	for _, name := range []tokenizer.Name{tokenizer.CL100K, tokenizer.O200K, tokenizer.Chars4} {
		c, err := tokenizer.Get(name)
		require.NoError(t, err)
		_, all, _, _ := fit(drafts, 1_000_000, c)
		for budget := 0; budget <= all+5; budget++ {
			_, total, sections, notes := fit(drafts, budget, c)
			assert.LessOrEqual(t, total, budget)
			for i, sec := range sections {
				assert.Equal(t, drafts[i].name, sec.Name, "%s at %d: the sections kept are the first ones", name, budget)
				if i < len(sections)-1 {
					assert.False(t, sec.Truncated, "%s at %d: %s was cut, yet a section below it stayed", name, budget, sec.Name)
				}
			}
			for _, d := range drafts[len(sections):] {
				assert.Contains(t, strings.Join(notes, "\n"), "section "+d.name+" dropped", "%s at %d", name, budget)
			}
		}
	}
}
