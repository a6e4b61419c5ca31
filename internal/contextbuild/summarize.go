package contextbuild

import (
	"fmt"
	"strings"

	"sessiongraph/ent/schema/schematype"
	"sessiongraph/internal/registry"
)

// The constants of assistant-message summarization.
const (
	markerThreshold = 3
	listThreshold   = 5
	cutAt           = 400
)

// SummarizeAssistant compresses an assistant message for conversation
// context by three rules: generated content (3+ of a type's
// content markers) becomes "Generated {type}(s): names. [Content archived]";
// a list of 5+ items becomes "{intro} ({n} items: a, b, c +N more)"; anything
// else longer than 400 characters is cut there, pointing at the step results
// that hold the rest. names are the labels of the generated content the
// message shows (see GeneratedType).
func SummarizeAssistant(msg string, d *registry.Domain, names []string) string {
	if t := GeneratedType(msg, d); t != "" {
		if len(names) == 0 {
			return fmt.Sprintf("Generated %s(s). [Content archived]", t)
		}
		return fmt.Sprintf("Generated %s(s): %s. [Content archived]", t, strings.Join(names, ", "))
	}
	if items := listItems(msg); len(items) >= listThreshold {
		intro := strings.TrimSpace(msg[:strings.Index(msg, "\n")])
		shown := items[:3]
		return fmt.Sprintf("%s (%d items: %s +%d more)", intro, len(items), strings.Join(shown, ", "), len(items)-3)
	}
	if r := []rune(msg); len(r) > cutAt {
		return string(r[:cutAt]) + "... [content continues in step results]"
	}
	return msg
}

// GeneratedType is the entity type whose generated content msg shows (3+
// of the type's content markers, the first rule), or "".
func GeneratedType(msg string, d *registry.Domain) string {
	if d == nil {
		return ""
	}
	lower := strings.ToLower(msg)
	for _, t := range d.Types {
		hits := 0
		for _, m := range t.ContentMarkers {
			if strings.Contains(lower, strings.ToLower(m)) {
				hits++
			}
		}
		if hits >= markerThreshold {
			return t.Name
		}
	}
	return ""
}

func listItems(msg string) []string {
	var items []string
	for _, line := range strings.Split(msg, "\n")[1:] {
		t := strings.TrimSpace(line)
		if item, ok := strings.CutPrefix(t, "- "); ok {
			items = append(items, item)
		} else if item, ok := strings.CutPrefix(t, "* "); ok {
			items = append(items, item)
		}
	}
	return items
}

// ReasoningLine compresses one turn's execution summary into the line the
// session's reasoning summary keeps once the turn is older than the last
// two: "T3: propose — Suggest a rice recipe [narrowing]; Generate a recipe:
// gen_recipe_1", with what the summary does not give left out ("T3" when
// it gives nothing).
func ReasoningLine(turn int, s *schematype.ExecutionSummary) string {
	if s == nil {
		s = &schematype.ExecutionSummary{}
	}
	var known knownParts
	var what []string // "propose — Suggest a rice recipe [narrowing]"
	if s.Decision != "" {
		what = append(what, s.Decision)
	}
	if s.Goal != "" {
		what = append(what, "— "+s.Goal)
	}
	if s.Phase != "" {
		what = append(what, "["+s.Phase+"]")
	}
	if len(what) > 0 {
		known = append(known, strings.TrimPrefix(strings.Join(what, " "), "— "))
	}
	if outcome := Outcome(s); outcome != "" {
		known = append(known, outcome)
	}
	if s.BlockedReason != nil {
		known = append(known, "blocked: "+*s.BlockedReason)
	}
	return known.after(fmt.Sprintf("T%d", turn), "; ")
}

// Outcome is the one-line execution outcome of a turn's steps: "Find Indian
// recipes: 5 items; Generate weekly plan: completed". A step is told by
// what its summary gives of its description and outcome, and left out when
// it gives neither.
func Outcome(s *schematype.ExecutionSummary) string {
	if s == nil {
		return ""
	}
	parts := make([]string, 0, len(s.Steps))
	for _, st := range s.Steps {
		if told := stepTold(st.Description, st.Outcome); told != "" {
			parts = append(parts, told)
		}
	}
	return strings.Join(parts, "; ")
}

// stepTold is "description: outcome" with what is not known left out.
func stepTold(description, outcome string) string {
	if description == "" || outcome == "" {
		return description + outcome
	}
	return description + ": " + outcome
}
