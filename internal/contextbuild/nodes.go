package contextbuild

import (
	"fmt"
	"strings"

	"sessiongraph/internal/registry"
)

// Understand builds seed 000's UnderstandContext: the current message, the
// last five turns with the entities each touched, the decision history, the
// entity registry table and any pending clarification.
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

	table := []string{"| Ref | Type | Label | Last Action | Created | Last Ref |", "| --- | --- | --- | --- | --- | --- |"}
	for _, e := range byRecency(s.Entries) {
		table = append(table, fmt.Sprintf("| %s | %s | %s | %s | T%d | T%d |", e.Ref, e.EntityType, e.Label, e.Action, e.TurnCreated, e.TurnLastReferenced))
	}
	if len(table) > 2 {
		drafts = append(drafts, section("entity_registry", "Entity registry", table...))
	}
	if len(s.PendingClarification) > 0 {
		drafts = append(drafts, section("pending_clarification", "Pending clarification", prettyJSON(s.PendingClarification)))
	}
	return drafts, names
}

// buildThink builds seed 000's ThinkContext: generated content, active
// entities with detail tags, long-term memory with reasons, the domain's
// data legends, the last two turns, the reasoning trace of the last two
// turns, and this turn's curation.
func buildThink(s *Snapshot, window int) ([]draft, Tiers) {
	t, names := tiers(s, window)
	var drafts []draft
	var gen []string
	for _, e := range t.Generated {
		gen = append(gen, entityLine(e)+" [unsaved]"+fmt.Sprintf(" T%d", e.TurnCreated))
	}
	drafts = append(drafts, section("generated_content", "Generated content", gen...))

	var active []string
	types := map[string]bool{}
	for _, e := range byRecency(t.Active) {
		if et, err := s.Domain.Type(e.EntityType); err == nil && !et.Condensed {
			continue // seed 000: condensed context shows only the relevant types
		}
		active = append(active, entityLine(e)+" "+thinkTag(e))
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
	return drafts, names
}

// buildAct builds Act's context (seed 000, build_act_entity_context and
// format_full_context): full data of generated and just-saved artifacts,
// the last three turns, the history summary, step summaries (the last three
// in full, older ones compressed) and the entities as background.
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
		switch a.Status {
		case registry.ArtifactPending:
			gen = append(gen, block)
		case registry.ArtifactPromoted:
			saved = append(saved, block)
		}
	}
	drafts = append(drafts, section("generated_content", "Generated content (not saved)", gen...))
	drafts = append(drafts, section("just_saved", "Just saved (content kept for linked records)", saved...))

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

	// Steps newest first: the last three in full, older ones as one line.
	var steps []string
	n := 0
	turns := s.Turns
	for i := len(turns) - 1; i >= 0; i-- {
		if turns[i].Summary == nil {
			continue
		}
		st := turns[i].Summary.Steps
		for j := len(st) - 1; j >= 0; j-- {
			if n < FullDetailSteps {
				steps = append(steps, fmt.Sprintf("T%d step %d (%s): %s → %s", turns[i].Number, st[j].Step, orDash(st[j].Kind), orDash(st[j].Description), orDash(st[j].Outcome)))
			} else {
				steps = append(steps, fmt.Sprintf("T%d step %d: %s", turns[i].Number, st[j].Step, orDash(st[j].Outcome)))
			}
			n++
		}
	}
	drafts = append(drafts, section("step_summaries", "Step summaries", steps...))

	var ents []string
	for _, e := range byRecency(append(append(t.Active, t.Retained...), t.Generated...)) {
		ents = append(ents, entityLine(e))
	}
	drafts = append(drafts, section("entities", "Entities", ents...))
	return drafts, names
}

// buildReply builds seed 000's ReplyContext: entities marked saved or not,
// the full pending artifacts, the conversation with the engagement summary,
// the last turn's reasoning, and the execution outcome.
func buildReply(s *Snapshot, window int) ([]draft, Tiers) {
	t, names := tiers(s, window)
	var drafts []draft
	var ents, content []string
	for _, e := range byRecency(append(t.Active, t.Retained...)) {
		if e.EntityID != nil {
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
	}
	drafts = append(drafts, section("conversation", "Conversation", conv...))

	// The turn being answered, or else the last one completed.
	last := cur
	if last == nil || last.Summary == nil {
		if past := pastTurns(s, 1); len(past) > 0 {
			last = &past[0]
		}
	}
	if last != nil && last.Summary != nil {
		sum := last.Summary
		var reasoning []string
		if sum.Phase != "" {
			reasoning = append(reasoning, "Phase: "+sum.Phase)
		}
		if sum.UserExpressed != "" {
			reasoning = append(reasoning, "User expressed: "+sum.UserExpressed)
		}
		drafts = append(drafts, section("reasoning", "Reasoning", reasoning...))
		if o := Outcome(sum); o != "" {
			drafts = append(drafts, section("execution_outcome", "Execution outcome", o))
		}
	}
	return drafts, names
}
