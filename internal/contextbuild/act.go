package contextbuild

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"sessiongraph/internal/registry"
)

// buildAct builds Act's context (its entity context, then the full
// context). First the working data, which Act acts on: the
// generated content not saved yet, what was just saved (its content kept
// for linked records), and the full data of the last FullDetailSteps step
// results. Then the conversation: the engagement summary and the last three
// turns, the history summary, the older steps as one line each, and the
// entities last, as background.
func buildAct(s *Snapshot, window int) ([]draft, Tiers) {
	t, names := tiers(s, window)
	var drafts []draft
	var gen, saved []string
	for _, e := range s.Entries {
		a := e.Artifact
		if a == nil {
			continue
		}
		block := fmt.Sprintf("### `%s`: %s (%s), revision %d\n```json\n%s\n```", e.Ref, e.Label, e.EntityType, a.Revision, prettyJSON(a.Content))
		switch {
		case a.Status == registry.ArtifactPending:
			gen = append(gen, block)
		case justSaved(s, e):
			saved = append(saved, block)
		}
	}
	drafts = append(drafts, section("generated_content", "Generated content (not saved)", gen...))
	drafts = append(drafts, section("just_saved", "Just saved (content kept for linked records)", saved...))

	full, older := splitSteps(s.Steps)
	var results []string
	for _, st := range full {
		results = append(results, stepLines(st)...)
	}
	drafts = append(drafts, section("step_results", "Step results", results...))

	var conv []string
	if s.EngagementSummary != "" {
		conv = append(conv, "Session: "+oneLine(s.EngagementSummary))
	}
	conv = append(conv, conversationLines(pastTurns(s, FullDetailTurns), nil)...)
	if cur := current(s); cur != nil {
		conv = append(conv, fmt.Sprintf("Turn %d — User (now): %s", cur.Number, oneLine(cur.UserMessage)))
	}
	drafts = append(drafts, section("conversation", "Recent conversation", conv...))
	if s.HistorySummary != "" {
		drafts = append(drafts, section("history_summary", "History summary", oneLine(s.HistorySummary)))
	}
	drafts = append(drafts, section("step_summaries", "Step summaries", olderStepLines(s, full, older)...))

	var ents []string
	for _, e := range byRecency(append(append(t.Active, t.Retained...), t.Generated...)) {
		ents = append(ents, entityLine(e))
	}
	drafts = append(drafts, section("entities", "Entities", ents...))
	return drafts, names
}

// justSaved reports whether an entry's artifact was saved in the current
// turn (a just-promoted artifact).
func justSaved(s *Snapshot, e *registry.Entry) bool {
	a := e.Artifact
	return a != nil && a.Status == registry.ArtifactPromoted && a.PromotedTurn != nil && *a.PromotedTurn == s.Turn
}

// splitSteps splits newest-first step results into the ones shown in full
// and the older ones.
func splitSteps(steps []StepResult) (full, older []StepResult) {
	n := min(FullDetailSteps, len(steps))
	return steps[:n], steps[n:]
}

// stepLines renders a step result in full: a heading with what the step
// was and how many items it had, its refs, then one line per item, so that
// a cut keeps whole items.
func stepLines(st StepResult) []string {
	lines := []string{fmt.Sprintf("### T%d step %d (%s): %s — %s", st.Turn, st.Step, st.Kind, describe(st), items(st.ItemCount))}
	if len(st.Refs) > 0 {
		lines = append(lines, "Refs: "+strings.Join(st.Refs, ", "))
	}
	for _, item := range st.Data {
		lines = append(lines, "- "+compactJSON(item))
	}
	if kept := len(st.Data); st.ItemCount > kept {
		lines = append(lines, fmt.Sprintf("(%d more items were counted but not kept: a step keeps its data up to a size limit)", st.ItemCount-kept))
	}
	return lines
}

// olderStepLines are the steps not shown in full, newest first, one line
// each: older step results (what step, which refs, how many items), and
// the steps the shown turns' execution summaries report without a result.
func olderStepLines(s *Snapshot, full, older []StepResult) []string {
	type line struct {
		turn, step int
		text       string
	}
	recorded := map[[2]int]bool{}
	var lines []line
	for _, st := range full {
		recorded[[2]int{st.Turn, st.Step}] = true
	}
	for _, st := range older {
		recorded[[2]int{st.Turn, st.Step}] = true
		text := fmt.Sprintf("T%d step %d (%s): %s — %s", st.Turn, st.Step, st.Kind, describe(st), items(st.ItemCount))
		if len(st.Refs) > 0 {
			text += ": " + refList(st.Refs)
		}
		lines = append(lines, line{st.Turn, st.Step, text})
	}
	for _, t := range s.Turns {
		if t.Summary == nil {
			continue
		}
		for _, st := range t.Summary.Steps {
			if recorded[[2]int{t.Number, st.Step}] {
				continue
			}
			lines = append(lines, line{t.Number, st.Step, reportedStep(fmt.Sprintf("T%d step %d", t.Number, st.Step), st)})
		}
	}
	slices.SortStableFunc(lines, func(a, b line) int {
		if a.turn != b.turn {
			return b.turn - a.turn
		}
		return b.step - a.step
	})
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l.text
	}
	if s.MoreSteps {
		out = append(out, fmt.Sprintf("(older step results are not shown: Act lists the newest %d)", FullDetailSteps+OlderStepSummaries))
	}
	return out
}

// describe is what a step was for: its description, or its number and kind.
func describe(st StepResult) string {
	if st.Description != "" {
		return oneLine(st.Description)
	}
	return fmt.Sprintf("Step %d (%s)", st.Step, st.Kind)
}

// stepOutcome is a recorded step's outcome in the execution outcome: how
// many items a read or write had, or that a generation or analysis ran.
func stepOutcome(st StepResult) string {
	switch st.Kind {
	case "READ", "WRITE":
		return items(st.ItemCount)
	}
	return "completed"
}

func items(n int) string {
	if n == 1 {
		return "1 item"
	}
	return fmt.Sprintf("%d items", n)
}

// refList names up to five refs and counts the rest.
func refList(refs []string) string {
	const shown = 5
	if len(refs) <= shown {
		return strings.Join(refs, ", ")
	}
	return fmt.Sprintf("%s +%d more", strings.Join(refs[:shown], ", "), len(refs)-shown)
}

// compactJSON renders an item on one line, keys sorted.
func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
