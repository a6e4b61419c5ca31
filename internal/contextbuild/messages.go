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
// prompt, then each turn's user message, the items recorded in it, and its assistant
// message. Over 80% of the model limit, SLIDING_WINDOW keeps the system message and every
// newest message that fits, with a notice of how many were cut; SUMMARY puts the
// history summary in a system message in place of the older ones and keeps
// at most KeepRecent messages verbatim. Either way the cut never falls
// between a function call and its output: both are kept or both cut
// (windowStarts).
// Counts are the ones stored with each turn and item: history is never re-tokenized.
func buildMessages(s *Snapshot, o Options, c Counter) Build {
	limit := int(float64(o.ModelLimit) * windowShare)
	b := Build{Node: Messages, Budget: limit}
	history := make([]Message, 0, 2*len(s.Turns))
	turnOf := make([]int, 0, 2*len(s.Turns)) // the turn of each message of history
	for _, t := range s.Turns {
		msgs := turnMessages(t)
		history = append(history, msgs...)
		for range msgs {
			turnOf = append(turnOf, t.Number)
		}
	}
	system := chatMessage("system", s.SystemPrompt, s.SystemPromptTokens)
	total := system.TokenCount + s.TotalTurnTokens
	// Turns older than the snapshot were not loaded: they count as cut.
	cut := s.TurnCount - len(s.Turns)

	keep := history
	if total > limit {
		room := limit - system.TokenCount
		var summary *Message
		if o.Strategy == Summary && s.HistorySummary != "" {
			content := "Previous conversation summary: " + s.HistorySummary
			m := chatMessage("system", content, c.Count(content))
			summary = &m
			room -= summary.TokenCount
		}
		// SLIDING_WINDOW keeps every newest message that fits; only SUMMARY,
		// whose summary stands for the rest, caps the verbatim tail.
		most := len(history)
		if summary != nil {
			most = o.KeepRecent
		}
		start := windowStart(history, room, most)
		keep = history[start:]
		dropped := start + 2*cut
		var lead []Message
		if summary != nil {
			lead = append(lead, *summary)
			b.Notes = append(b.Notes, fmt.Sprintf("%d older messages replaced by the history summary", dropped))
		} else {
			notice := fmt.Sprintf("[Note: %d older messages truncated to stay within token limit]", dropped)
			lead = append(lead, chatMessage("system", notice, c.Count(notice)))
		}
		keep = append(lead, keep...)
		b.TruncatedTurns = s.TurnCount - turnsIn(turnOf[start:])
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
		if m.Kind == ItemFunctionCall || m.Kind == ItemFunctionCallOutput {
			size += len("[output of ] ") + len(m.CallID) + len(m.Name) + len(m.Arguments)
		}
	}
	// The text is written into one buffer of its final size.
	var text strings.Builder
	text.Grow(size)
	for i, m := range b.Messages {
		if i > 0 {
			text.WriteString(separator)
		}
		writeMessageLine(&text, m)
	}
	b.Text = text.String()
	return b
}

// turnsIn is how many turns the kept messages (each one's turn, in order)
// show, at least in part.
func turnsIn(turns []int) int {
	seen := 0
	for i := range turns {
		if i == 0 || turns[i] != turns[i-1] {
			seen++
		}
	}
	return seen
}

// chatMessage is a plain message of the build or of a turn.
func chatMessage(role, content string, tokens int) Message {
	return Message{Role: role, Content: content, TokenCount: tokens, Kind: ItemMessage}
}

// turnMessages are a turn's messages in order: its user message, its
// recorded items, and its assistant message once it has ended. A turn
// with recorded items leaves out an empty user or assistant message: its
// client records every message as an item.
func turnMessages(t Turn) []Message {
	out := make([]Message, 0, len(t.Items)+2)
	if t.UserMessage != "" || len(t.Items) == 0 {
		out = append(out, chatMessage("user", t.UserMessage, t.UserTokens))
	}
	for _, it := range t.Items {
		m := Message{Role: it.Role, Content: it.Content, TokenCount: it.Tokens, Kind: it.Kind,
			Name: it.Name, CallID: it.CallID, Arguments: it.Arguments, Recorded: it.JSON}
		switch it.Kind {
		case ItemFunctionCallOutput:
			m.Role = "tool"
		case ItemMessage:
		default: // a call, reasoning or another item is the assistant's
			m.Role = "assistant"
		}
		out = append(out, m)
	}
	if !t.Open && (t.AssistantMessage != "" || len(t.Items) == 0) {
		out = append(out, chatMessage("assistant", t.AssistantMessage, t.AssistantTokens))
	}
	return out
}

// writeMessageLine writes a message as a line of the build's text.
func writeMessageLine(text *strings.Builder, m Message) {
	text.WriteString(m.Role)
	text.WriteString(": ")
	switch m.Kind {
	case ItemFunctionCall:
		text.WriteString("[call " + m.CallID + " " + m.Name + "(" + m.Arguments + ")]")
		return
	case ItemFunctionCallOutput:
		text.WriteString("[output of " + m.CallID + "] ")
	}
	text.WriteString(m.Content)
}

// windowStart is where the window of history begins: the oldest message
// such that the messages from it on fit in room tokens, number at most
// most, and hold every function call with its output. A start between a
// call and its output (by call id, either order) is no start: the window
// moves on past both.
func windowStart(history []Message, room, most int) int {
	valid := windowStarts(history)
	start, used := len(history), 0
	for i := len(history) - 1; i >= 0; i-- {
		used += history[i].TokenCount
		if used > room || len(history)-i > most {
			break
		}
		if valid[i] {
			start = i
		}
	}
	return start
}

// windowStarts says, for each message of history, whether a window may
// begin there: no call id has a message before it and another at or after
// it. A call id's messages span from its first to its last; starts inside
// a span are marked by a difference array, in one pass.
func windowStarts(history []Message) []bool {
	first, last := map[string]int{}, map[string]int{}
	for i, m := range history {
		if m.Kind != ItemFunctionCall && m.Kind != ItemFunctionCallOutput {
			continue
		}
		if _, ok := first[m.CallID]; !ok {
			first[m.CallID] = i
		}
		last[m.CallID] = i
	}
	inside := make([]int, len(history)+1)
	for id, f := range first {
		if l := last[id]; l > f {
			inside[f+1]++
			inside[l+1]--
		}
	}
	valid := make([]bool, len(history))
	open := 0
	for i := range history {
		open += inside[i]
		valid[i] = open == 0
	}
	return valid
}
