package contextbuild

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"sessiongraph/ent/schema/schematype"
	"sessiongraph/internal/registry"
)

// entityLine is how a ref appears in a prompt: - `recipe_1`: Butter Chicken (recipe).
func entityLine(e *registry.Entry) string {
	// Joined, not formatted: a build writes one per ref in its window.
	return "- `" + e.Ref + "`: " + entityLabel(e) + " (" + e.EntityType + ")"
}

func entityLabel(e *registry.Entry) string {
	if e.Label == "" {
		return "(no label yet)"
	}
	return e.Label
}

// thinkLine is entityLine followed by the detail tag: [read:full] T3,
// [read:summary] T2, or the action tag and the turn last referenced. One
// concatenation, one string: THINK writes one per active ref.
func thinkLine(e *registry.Entry) string {
	label := entityLabel(e)
	switch {
	case e.DetailLevel == registry.DetailFull && e.FullTurn != nil:
		return "- `" + e.Ref + "`: " + label + " (" + e.EntityType + ") [read:full] T" + strconv.Itoa(*e.FullTurn)
	case e.DetailLevel == registry.DetailSummary:
		return "- `" + e.Ref + "`: " + label + " (" + e.EntityType + ") [read:summary] T" + strconv.Itoa(e.TurnLastReferenced)
	}
	return "- `" + e.Ref + "`: " + label + " (" + e.EntityType + ") [" + e.Action + "] T" + strconv.Itoa(e.TurnLastReferenced)
}

// prettyJSON renders artifact content deterministically (sorted keys).
func prettyJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// pastTurns returns up to n turns before the current one, oldest first.
func pastTurns(s *Snapshot, n int) []Turn {
	var past []Turn
	for _, t := range s.Turns {
		if t.Number < s.Turn || (t.Number == s.Turn && !t.Open) {
			past = append(past, t)
		}
	}
	if len(past) > n {
		past = past[len(past)-n:]
	}
	return past
}

// current returns the open current turn, if any.
func current(s *Snapshot) *Turn {
	for i := range s.Turns {
		if t := &s.Turns[i]; t.Number == s.Turn && t.Open {
			return t
		}
	}
	return nil
}

// conversationLines renders turns: the user's words in full and the
// assistant's summary (recent turns keep full user messages and
// summarized assistant messages).
func conversationLines(turns []Turn, annotate func(Turn) string) []string {
	var lines []string
	for _, t := range turns {
		lines = append(lines, fmt.Sprintf("Turn %d — User: %s", t.Number, oneLine(t.UserMessage)))
		lines = append(lines, itemLines(t)...)
		if t.AssistantSummary != "" {
			lines = append(lines, fmt.Sprintf("Turn %d — Assistant: %s", t.Number, oneLine(t.AssistantSummary)))
		}
		if annotate != nil {
			if a := annotate(t); a != "" {
				lines = append(lines, "  Entities: "+a)
			}
		}
	}
	return lines
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// itemLines render the items recorded in a turn for a conversation: each
// function call with its output, and messages other than the turn's own,
// cut as assistant summaries are (cutAt characters). Reasoning is the
// reasoning trace's; other items are left out.
func itemLines(t Turn) []string {
	outputs := map[string]string{}
	for _, it := range t.Items {
		if it.Kind == ItemFunctionCallOutput {
			outputs[it.CallID] = it.Content
		}
	}
	called := map[string]bool{}
	var lines []string
	for _, it := range t.Items {
		switch it.Kind {
		case ItemFunctionCall:
			called[it.CallID] = true
			line := fmt.Sprintf("Turn %d — Tool %s(%s)", t.Number, it.Name, shortLine(it.Arguments))
			if out, ok := outputs[it.CallID]; ok {
				line += " → " + shortLine(out)
			}
			lines = append(lines, line)
		case ItemFunctionCallOutput:
			if !called[it.CallID] { // its call came in another turn
				lines = append(lines, fmt.Sprintf("Turn %d — Tool output (%s): %s", t.Number, it.CallID, shortLine(it.Content)))
			}
		case ItemMessage:
			if it.Content != "" {
				lines = append(lines, fmt.Sprintf("Turn %d — %s: %s", t.Number, titleRole(it.Role), shortLine(it.Content)))
			}
		}
	}
	return lines
}

// shortLine is s on one line, cut at cutAt characters.
func shortLine(s string) string {
	s = oneLine(s)
	if r := []rune(s); len(r) > cutAt {
		return string(r[:cutAt]) + "..."
	}
	return s
}

// titleRole is a role as a conversation line names it (User, Assistant).
func titleRole(role string) string {
	if role == "" {
		return role
	}
	return strings.ToUpper(role[:1]) + role[1:]
}

// tiers sorts the snapshot's entries into tiers and names them.
func tiers(s *Snapshot, window int) (registry.Tiers, Tiers) {
	t := registry.SortTiers(s.Entries, s.Turn, window)
	names := func(es []*registry.Entry) []string {
		out := make([]string, len(es))
		for i, e := range es {
			out[i] = e.Ref
		}
		return out
	}
	return t, Tiers{Active: names(t.Active), Generated: names(t.Generated), Retained: names(t.Retained)}
}

// byRecency orders entries most recently referenced first, then by ref.
func byRecency(es []*registry.Entry) []*registry.Entry {
	out := slices.Clone(es)
	slices.SortStableFunc(out, func(a, b *registry.Entry) int {
		if a.TurnLastReferenced != b.TurnLastReferenced {
			return b.TurnLastReferenced - a.TurnLastReferenced
		}
		return strings.Compare(a.Ref, b.Ref)
	})
	return out
}

func reasoningLines(turns []Turn) []string {
	var lines []string
	for _, t := range turns {
		s := t.Summary
		if s == nil {
			continue
		}
		lines = append(lines, reasoningHead(t.Number, s))
		for _, st := range s.Steps {
			lines = append(lines, reportedStep(fmt.Sprintf("  Step %d", st.Step), st))
		}
		if c := s.Curation; c != nil {
			for _, r := range c.Retained {
				lines = append(lines, fmt.Sprintf("  Retained %s: %s", r.Ref, r.Reason))
			}
			for _, d := range c.Demoted {
				lines = append(lines, fmt.Sprintf("  Demoted %s", d))
			}
		}
		if s.BlockedReason != nil {
			lines = append(lines, "  Blocked: "+*s.BlockedReason)
		}
	}
	return lines
}

// reasoningHead is a turn's line of the reasoning trace with the fields its
// execution summary gives, and only those: Think reads a placeholder as
// something the turn said ("Turn 3: decision plan_direct, goal "Show a
// recipe""; "Turn 3" when it gave none).
func reasoningHead(turn int, s *schematype.ExecutionSummary) string {
	var known knownParts
	if s.Decision != "" {
		known = append(known, "decision "+s.Decision)
	}
	if s.Goal != "" {
		known = append(known, fmt.Sprintf("goal %q", s.Goal))
	}
	if s.Phase != "" {
		known = append(known, "phase "+s.Phase)
	}
	if s.UserExpressed != "" {
		known = append(known, fmt.Sprintf("user expressed %q", s.UserExpressed))
	}
	return known.after(fmt.Sprintf("Turn %d", turn), ", ")
}

// reportedStep is a step as an execution summary reports it, after prefix,
// leaving out what it does not say: "Step 1 (read): Read recipes → 3
// items", "Step 1 (read)", "Step 1: Read breads".
func reportedStep(prefix string, st schematype.StepSummary) string {
	line := prefix
	if st.Kind != "" {
		line += " (" + st.Kind + ")"
	}
	if st.Description != "" {
		line += ": " + st.Description
	}
	if st.Outcome != "" {
		line += " → " + st.Outcome
	}
	return line
}

// knownParts are the parts of a line that are known.
type knownParts []string

// after is head followed by ": " and the known parts joined by sep, or head
// alone when none is known.
func (k knownParts) after(head, sep string) string {
	if len(k) == 0 {
		return head
	}
	return head + ": " + strings.Join(k, sep)
}
