package contextbuild

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// words counts a token per word: enough to place a cut exactly.
type words struct{}

func (words) Count(s string) int { return len(splitWords(s)) }

func splitWords(s string) []string {
	var out []string
	field := ""
	for _, r := range s + " " {
		if r == ' ' || r == '\n' {
			if field != "" {
				out = append(out, field)
			}
			field = ""
			continue
		}
		field += string(r)
	}
	return out
}

// chat is a session of n closed turns whose messages cost tokens each.
func chat(n, tokens int) *Snapshot {
	s := &Snapshot{SystemPrompt: "be brief", SystemPromptTokens: 2, Turn: n, TurnCount: n}
	for i := 1; i <= n; i++ {
		s.Turns = append(s.Turns, Turn{Number: i,
			UserMessage: fmt.Sprintf("question %d", i), UserTokens: tokens,
			AssistantMessage: fmt.Sprintf("answer %d", i), AssistantTokens: tokens})
		s.TotalTurnTokens += 2 * tokens
	}
	return s
}

// TestTheSlidingWindowKeepsEveryNewestMessageThatFits: over 80% of the
// model limit, SLIDING_WINDOW keeps as many of the newest messages as fit
// in that 80%, not a fixed count.
func TestTheSlidingWindowKeepsEveryNewestMessageThatFits(t *testing.T) {
	// 40 turns, 80 messages of 10 tokens: 802 tokens against a limit of 1,000
	// (800 usable). The system prompt's 2 leave 798: 79 messages fit.
	b := buildMessages(chat(40, 10), WithDefaults(Messages, Options{ModelLimit: 1000}), words{})
	require.Equal(t, "system", b.Messages[0].Role)
	notice := b.Messages[1]
	assert.Equal(t, "[Note: 1 older messages truncated to stay within token limit]", notice.Content)
	kept := b.Messages[2:]
	assert.Len(t, kept, 79, "far more than keepRecent's default of 10")
	assert.Equal(t, "answer 1", kept[0].Content)
	assert.Equal(t, "answer 40", kept[len(kept)-1].Content)
}

// TestTheSummaryStrategyKeepsKeepRecentMessagesVerbatim: SUMMARY puts the
// history summary in place of the older messages and keeps at most
// keepRecent of the newest word for word.
func TestTheSummaryStrategyKeepsKeepRecentMessagesVerbatim(t *testing.T) {
	s := chat(40, 10)
	s.HistorySummary = "they talked about curries"
	b := buildMessages(s, WithDefaults(Messages, Options{ModelLimit: 1000, Strategy: Summary}), words{})
	require.Equal(t, "system", b.Messages[1].Role)
	assert.Equal(t, "Previous conversation summary: they talked about curries", b.Messages[1].Content)
	kept := b.Messages[2:]
	assert.Len(t, kept, DefaultKeepRecent)
	assert.Equal(t, "question 36", kept[0].Content)
}
