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
