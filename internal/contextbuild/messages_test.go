package contextbuild

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent/turnitem"
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

// TestTheWindowNeverStartsBetweenACallAndItsOutput sweeps every room and
// every cap on the message count over histories whose calls and outputs
// nest, interleave, run across turns and come out of order: the window is
// the longest suffix that fits, keeps the cap and holds each call id's
// messages all or none, checked by brute force.
func TestTheWindowNeverStartsBetweenACallAndItsOutput(t *testing.T) {
	msg := func(kind turnitem.Kind, id string, tokens int) Message {
		return Message{Kind: kind, CallID: id, TokenCount: tokens}
	}
	text := func(tokens int) Message { return msg(ItemMessage, "", tokens) }
	call := func(id string, tokens int) Message { return msg(ItemFunctionCall, id, tokens) }
	out := func(id string, tokens int) Message { return msg(ItemFunctionCallOutput, id, tokens) }
	histories := [][]Message{
		{},
		{text(3)},
		{text(2), call("a", 1), out("a", 4), text(2)},
		{text(1), call("a", 2), call("b", 3), out("a", 1), out("b", 5), text(2)},
		{call("a", 2), call("b", 1), out("b", 2), out("a", 3)},
		{text(2), out("x", 3), text(1), call("x", 2), text(4)}, // the output recorded first
		{call("a", 1), text(2), call("b", 2), out("a", 2), text(1), out("b", 1), call("c", 3), out("c", 3)},
		{call("lonely", 2), text(3), out("other", 2), text(1)}, // no pair: any start
		{call("a", 0), out("a", 0), text(0), call("b", 5), out("b", 0)},
	}
	holdsPairs := func(h []Message, start int) bool {
		for _, m := range h[:start] {
			if m.CallID == "" {
				continue
			}
			for _, later := range h[start:] {
				if later.CallID == m.CallID {
					return false
				}
			}
		}
		return true
	}
	for hi, h := range histories {
		total := 0
		for _, m := range h {
			total += m.TokenCount
		}
		for room := 0; room <= total+1; room++ {
			for most := 0; most <= len(h)+1; most++ {
				want := len(h)
				for start := len(h) - 1; start >= 0; start-- {
					used := 0
					for _, m := range h[start:] {
						used += m.TokenCount
					}
					if used <= room && len(h)-start <= most && holdsPairs(h, start) {
						want = start
					}
				}
				require.Equal(t, want, windowStart(h, room, most), "history %d, room %d, most %d", hi, room, most)
			}
		}
	}
}
