package contextbuild

import (
	"fmt"
	"slices"
	"strings"

	"sessiongraph/ent/schema/schematype"
)

// Understand builds Understand's context: the current message, the
// last five turns with the entities each touched (created or last
// referenced in it), the decision history, any pending clarification, and
// the entity registry table of every ref.
func buildUnderstand(s *Snapshot, window int) ([]draft, Tiers) {
	_, names := tiers(s, window)
	var drafts []draft
	if cur := current(s); cur != nil {
		drafts = append(drafts, section("current_message", "Current message", oneLine(cur.UserMessage)))
	}
	turns := pastTurns(s, UnderstandTurns)
	drafts = append(drafts, section("conversation", "Recent conversation", conversationLines(turns, func(t Turn) string {
		var parts []string
		for _, e := range s.Entries {
			if e.TurnCreated == t.Number || e.TurnLastReferenced == t.Number {
				parts = append(parts, fmt.Sprintf("%s: %s (%s)", e.Ref, e.Label, e.Action))
			}
		}
		return strings.Join(parts, ", ")
	})...))

	decisions := []string{"| Turn | Entity | Decision | Reason |", "| --- | --- | --- | --- |"}
	for _, t := range turns {
		if t.Summary == nil || t.Summary.Curation == nil {
			continue
		}
		for _, r := range t.Summary.Curation.Retained {
			decisions = append(decisions, fmt.Sprintf("| %d | %s | retain | %s |", t.Number, r.Ref, r.Reason))
		}
		for _, d := range t.Summary.Curation.Demoted {
			decisions = append(decisions, fmt.Sprintf("| %d | %s | demote | |", t.Number, d))
		}
	}
	if len(decisions) > 2 {
		drafts = append(drafts, section("decision_history", "Decision history", decisions...))
	}

	// The registry table lists every ref and grows with the session: it
	// comes last, so that a tight budget cuts its oldest rows and nothing
	// else, while the question Think asked stays.
	if len(s.PendingClarification) > 0 {
		drafts = append(drafts, section("pending_clarification", "Pending clarification", prettyJSON(s.PendingClarification)))
	}
	table := []string{"| Ref | Type | Label | Last Action | Created | Last Ref |", "| --- | --- | --- | --- | --- | --- |"}
	for _, e := range byRecency(s.Entries) {
		table = append(table, fmt.Sprintf("| %s | %s | %s | %s | T%d | T%d |", e.Ref, e.EntityType, e.Label, e.Action, e.TurnCreated, e.TurnLastReferenced))
	}
	if len(table) > 2 {
		drafts = append(drafts, section("entity_registry", "Entity registry", table...))
	}
	return drafts, names
}

// buildThink builds Think's context, a condensed context: the
// engagement summary, generated content, active entities with detail tags,
// long-term memory with reasons, the domain's data legends, the last two
// turns, the reasoning trace of the last two turns, this turn's curation,
// and the history summary last, kept only while the budget has room.
func buildThink(s *Snapshot, window int) ([]draft, Tiers) {
	t, names := tiers(s, window)
	// The condensed context opens with the session's theme and, if room is
	// left once everything else is laid out, ends with the history summary.
	var drafts []draft
	if s.EngagementSummary != "" {
		drafts = append(drafts, section("engagement_summary", "Session", oneLine(s.EngagementSummary)))
	}
	var gen []string
	for _, e := range t.Generated {
		gen = append(gen, entityLine(e)+" [unsaved]"+fmt.Sprintf(" T%d", e.TurnCreated))
	}
	drafts = append(drafts, section("generated_content", "Generated content", gen...))

	var active []string
	types := map[string]bool{}
	for _, e := range byRecency(t.Active) {
		if et, err := s.Domain.Type(e.EntityType); err == nil && !et.Condensed {
			continue // a condensed context shows only the relevant types
		}
		active = append(active, thinkLine(e))
		types[e.EntityType] = true
	}
	if len(active) > 0 {
		active = append(active, "Tags: [read:full] the whole record was read; [read:summary] only summary fields, read it in full before relying on details; a :user suffix means the user did it in the app; Tn is the turn.")
	}
	drafts = append(drafts, section("active_entities", "Active entities", active...))

	var memory []string
	for _, e := range t.Retained {
		memory = append(memory, fmt.Sprintf("%s — %s", entityLine(e), *e.ActiveReason))
		types[e.EntityType] = true
	}
	drafts = append(drafts, section("long_term_memory", "Long-term memory", memory...))

	var legends []string
	for _, et := range s.Domain.Types {
		if types[et.Name] && et.DataLegend != "" {
			legends = append(legends, fmt.Sprintf("- %s: %s", et.Name, oneLine(et.DataLegend)))
		}
	}
	drafts = append(drafts, section("data_legends", "Data legends", legends...))

	conv := conversationLines(pastTurns(s, ThinkDepth), nil)
	if cur := current(s); cur != nil {
		conv = append(conv, fmt.Sprintf("Turn %d — User (now): %s", cur.Number, oneLine(cur.UserMessage)))
		conv = append(conv, itemLines(*cur)...)
	}
	if len(s.PendingClarification) > 0 {
		conv = append(conv, "Pending clarification: "+oneLine(prettyJSON(s.PendingClarification)))
	}
	drafts = append(drafts, section("conversation", "Conversation", conv...))

	trace := reasoningLines(pastTurns(s, ThinkDepth))
	if s.ReasoningSummary != "" {
		trace = append(trace, "Earlier turns:")
		for _, line := range strings.Split(s.ReasoningSummary, "\n") {
			trace = append(trace, "  "+oneLine(line))
		}
	}
	drafts = append(drafts, section("reasoning_trace", "Reasoning trace", trace...))

	if cur := current(s); cur != nil && cur.Summary != nil && cur.Summary.Curation != nil {
		var cur8 []string
		for _, r := range cur.Summary.Curation.Retained {
			cur8 = append(cur8, fmt.Sprintf("Retained %s: %s", r.Ref, r.Reason))
		}
		for _, d := range cur.Summary.Curation.Demoted {
			cur8 = append(cur8, "Demoted "+d)
		}
		drafts = append(drafts, section("current_curation", "Current curation", cur8...))
	}
	if s.HistorySummary != "" {
		drafts = append(drafts, section("history_summary", "History summary", oneLine(s.HistorySummary)))
	}
	return drafts, names
}

// buildReply builds Reply's context: entities marked saved or not,
// the full pending artifacts, the conversation with the engagement summary,
// the last turn's reasoning, and the execution outcome.
func buildReply(s *Snapshot, window int) ([]draft, Tiers) {
	t, names := tiers(s, window)
	var drafts []draft
	var ents, content []string
	for _, e := range byRecency(append(t.Active, t.Retained...)) {
		switch {
		case justSaved(s, e):
			ents = append(ents, entityLine(e)+" — SAVED in this turn. Say it was saved; don't offer to save it again.")
		case e.EntityID != nil:
			ents = append(ents, entityLine(e)+" — ALREADY EXISTS. Don't offer to save.")
		}
	}
	for _, e := range t.Generated {
		ents = append(ents, entityLine(e)+" — NOT YET SAVED. Offer to save if appropriate.")
		content = append(content, fmt.Sprintf("### `%s`: %s\n```json\n%s\n```", e.Ref, e.Label, prettyJSON(e.Artifact.Content)))
	}
	drafts = append(drafts, section("entities", "Entities", ents...))
	drafts = append(drafts, section("generated_content", "Generated content", content...))

	var conv []string
	if s.EngagementSummary != "" {
		conv = append(conv, "Session: "+oneLine(s.EngagementSummary))
	}
	conv = append(conv, conversationLines(pastTurns(s, ThinkDepth), nil)...)
	cur := current(s)
	if cur != nil {
		conv = append(conv, fmt.Sprintf("Turn %d — User (now): %s", cur.Number, oneLine(cur.UserMessage)))
		conv = append(conv, itemLines(*cur)...)
	}
	drafts = append(drafts, section("conversation", "Conversation", conv...))

	// The turn being answered, or else, while it has nothing to tell yet,
	// the last one completed.
	last := cur
	if last == nil || last.Summary == nil && !hasSteps(s.Steps, last.Number) {
		if past := pastTurns(s, 1); len(past) > 0 {
			last = &past[0]
		}
	}
	if last == nil {
		return drafts, names
	}
	if sum := last.Summary; sum != nil {
		var reasoning []string
		if sum.Phase != "" {
			reasoning = append(reasoning, "Phase: "+sum.Phase)
		}
		if sum.UserExpressed != "" {
			reasoning = append(reasoning, "User expressed: "+sum.UserExpressed)
		}
		drafts = append(drafts, section("reasoning", "Reasoning", reasoning...))
	}
	if o := turnOutcome(*last, s.Steps); o != "" {
		drafts = append(drafts, section("execution_outcome", "Execution outcome", o))
	}
	return drafts, names
}

// turnOutcome is the one-line outcome of a turn's steps: "Find Indian
// recipes: 5 items; Generate weekly plan: completed". A step with a
// recorded result is told from it (how many items it read or wrote, or
// that it ran); one the execution summary alone reports keeps its outcome.
func turnOutcome(t Turn, steps []StepResult) string {
	byStep := map[int]StepResult{}
	var numbers []int
	for _, st := range steps {
		if st.Turn == t.Number {
			byStep[st.Step] = st
			numbers = append(numbers, st.Step)
		}
	}
	reported := map[int]schematype.StepSummary{}
	if t.Summary != nil {
		for _, st := range t.Summary.Steps {
			if _, ok := reported[st.Step]; !ok {
				reported[st.Step] = st
				numbers = append(numbers, st.Step)
			}
		}
	}
	slices.Sort(numbers)
	numbers = slices.Compact(numbers)
	parts := make([]string, 0, len(numbers))
	for _, n := range numbers {
		rep, hasReport := reported[n]
		res, hasResult := byStep[n]
		switch {
		case hasResult && res.Description == "" && rep.Description != "":
			parts = append(parts, fmt.Sprintf("%s: %s", oneLine(rep.Description), stepOutcome(res)))
		case hasResult:
			parts = append(parts, fmt.Sprintf("%s: %s", describe(res), stepOutcome(res)))
		case hasReport && stepTold(rep.Description, rep.Outcome) != "":
			parts = append(parts, stepTold(rep.Description, rep.Outcome))
		}
	}
	return strings.Join(parts, "; ")
}

func hasSteps(steps []StepResult, turn int) bool {
	return slices.ContainsFunc(steps, func(st StepResult) bool { return st.Turn == turn })
}
