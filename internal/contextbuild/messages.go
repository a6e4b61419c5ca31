package contextbuild

import (
	"fmt"
	"strings"
)

// The chat window's constants.
const (
	// windowShare is the part of the model limit a conversation may fill.
	windowShare = 0.8
	// DefaultKeepRecent is how many recent messages the window keeps.
	DefaultKeepRecent = 10
	// DefaultModelLimit is the model limit when a request names none.
	DefaultModelLimit = 128000
)

// buildMessages renders the session as chat messages (conversation sessions): the system
// prompt, then each turn's user and assistant messages. Over 80% of the
// model limit, SLIDING_WINDOW keeps the system message and every newest
// message that fits, with a notice of how many were cut; SUMMARY puts the
// history summary in a system message in place of the older ones and keeps
// at most KeepRecent messages verbatim.
// Counts are the ones stored with each turn: history is never re-tokenized.
func buildMessages(s *Snapshot, o Options, c Counter) Build {
	limit := int(float64(o.ModelLimit) * windowShare)
	b := Build{Node: Messages, Budget: limit}
	history := make([]Message, 0, 2*len(s.Turns))
	for _, t := range s.Turns {
		history = append(history, Message{Role: "user", Content: t.UserMessage, TokenCount: t.UserTokens})
		if !t.Open {
			history = append(history, Message{Role: "assistant", Content: t.AssistantMessage, TokenCount: t.AssistantTokens})
		}
	}
	system := Message{Role: "system", Content: s.SystemPrompt, TokenCount: s.SystemPromptTokens}
	total := system.TokenCount + s.TotalTurnTokens
	// Turns older than the snapshot were not loaded: they count as cut.
	cut := s.TurnCount - len(s.Turns)

	keep := history
	if total > limit {
		room := limit - system.TokenCount
		var summary *Message
		if o.Strategy == Summary && s.HistorySummary != "" {
			content := "Previous conversation summary: " + s.HistorySummary
			summary = &Message{Role: "system", Content: content, TokenCount: c.Count(content)}
			room -= summary.TokenCount
		}
		// SLIDING_WINDOW keeps every newest message that fits; only SUMMARY,
		// whose summary stands for the rest, caps the verbatim tail.
		most := len(history)
		if summary != nil {
			most = o.KeepRecent
		}
		n, used := 0, 0
		for i := len(history) - 1; i >= 0 && n < most; i-- {
			if used+history[i].TokenCount > room {
				break
			}
			used += history[i].TokenCount
			n++
		}
		keep = history[len(history)-n:]
		dropped := len(history) - n + 2*cut
		var lead []Message
		if summary != nil {
			lead = append(lead, *summary)
			b.Notes = append(b.Notes, fmt.Sprintf("%d older messages replaced by the history summary", dropped))
		} else {
			notice := fmt.Sprintf("[Note: %d older messages truncated to stay within token limit]", dropped)
			lead = append(lead, Message{Role: "system", Content: notice, TokenCount: c.Count(notice)})
		}
		keep = append(lead, keep...)
		b.TruncatedTurns = s.TurnCount - (n+1)/2
	}
	if system.Content != "" {
		b.Messages = append([]Message{system}, keep...)
	} else {
		b.Messages = keep
	}
	size := 0
	for _, m := range b.Messages {
		b.TokenCount += m.TokenCount
		size += len(m.Role) + len(": ") + len(m.Content) + len(separator)
	}
	// The text is written into one buffer of its final size.
	var text strings.Builder
	text.Grow(size)
	for i, m := range b.Messages {
		if i > 0 {
			text.WriteString(separator)
		}
		text.WriteString(m.Role)
		text.WriteString(": ")
		text.WriteString(m.Content)
	}
	b.Text = text.String()
	return b
}
