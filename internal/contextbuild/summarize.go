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
// session's reasoning summary keeps once the turn is older than the last two.
func ReasoningLine(turn int, s *schematype.ExecutionSummary) string {
	if s == nil {
		return fmt.Sprintf("T%d: (no summary)", turn)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "T%d: %s", turn, orDash(s.Decision))
	if s.Goal != "" {
		fmt.Fprintf(&b, " — %s", s.Goal)
	}
	if s.Phase != "" {
		fmt.Fprintf(&b, " [%s]", s.Phase)
	}
	if outcome := Outcome(s); outcome != "" {
		fmt.Fprintf(&b, "; %s", outcome)
	}
	if s.BlockedReason != nil {
		fmt.Fprintf(&b, "; blocked: %s", *s.BlockedReason)
	}
	return b.String()
}

// Outcome is the one-line execution outcome of a turn's steps: "Find Indian
// recipes: 5 items; Generate weekly plan: completed".
func Outcome(s *schematype.ExecutionSummary) string {
	if s == nil {
		return ""
	}
	parts := make([]string, 0, len(s.Steps))
	for _, st := range s.Steps {
		parts = append(parts, fmt.Sprintf("%s: %s", orDash(st.Description), orDash(st.Outcome)))
	}
	return strings.Join(parts, "; ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
