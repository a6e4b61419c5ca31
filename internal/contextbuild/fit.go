package contextbuild

import (
	"fmt"
	"strings"
)

// separator joins sections.
const separator = "\n\n"

// draft is a section before fitting: a title and its lines.
type draft struct {
	name  string
	title string
	lines []string
}

func section(name, title string, lines ...string) draft {
	return draft{name: name, title: title, lines: lines}
}

func (d draft) text(n int) string {
	return "## " + d.title + "\n" + strings.Join(d.lines[:n], "\n")
}

// fit lays out drafts in priority order within budget tokens: a section that
// does not fit whole keeps as many of its first lines as fit, with a note of
// what was cut; one whose title alone does not fit is dropped. The result is
// within budget by the counter's count of the joined text.
func fit(drafts []draft, budget int, c Counter) (text string, sections []Section, notes []string) {
	used := 0
	var parts []string
	for _, d := range drafts {
		if len(d.lines) == 0 {
			continue
		}
		sep := 0
		if len(parts) > 0 {
			sep = c.Count(separator)
		}
		room := budget - used - sep
		n := len(d.lines)
		cost := c.Count(d.text(n))
		truncated := false
		for cost > room && n > 0 {
			n = shrink(d, n, room, c)
			truncated = true
			cost = c.Count(d.text(n) + cutNote(len(d.lines)-n))
		}
		if n == 0 || cost > room {
			notes = append(notes, fmt.Sprintf("section %s dropped: the budget of %d tokens was used up", d.name, budget))
			continue
		}
		body := d.text(n)
		if truncated {
			body += cutNote(len(d.lines) - n)
			notes = append(notes, fmt.Sprintf("section %s cut to %d of %d lines to fit the budget", d.name, n, len(d.lines)))
		}
		parts = append(parts, body)
		used += sep + cost
		sections = append(sections, Section{Name: d.name, Text: body, TokenCount: cost, Truncated: truncated})
	}
	text = strings.Join(parts, separator)
	// BPE can merge across a join; trim the last section until the whole fits.
	for c.Count(text) > budget && len(sections) > 0 {
		last := len(sections) - 1
		sections = sections[:last]
		parts = parts[:last]
		text = strings.Join(parts, separator)
		notes = append(notes, "last section dropped to keep the joined text within budget")
	}
	return text, sections, notes
}

// shrink returns the next smaller line count to try: a proportional guess
// first, then one line at a time.
func shrink(d draft, n, room int, c Counter) int {
	if room <= 0 {
		return 0
	}
	cost := c.Count(d.text(n))
	guess := n * room / max(cost, 1)
	if guess < n-1 {
		return max(guess, 0)
	}
	return n - 1
}

func cutNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("\n[%d more lines cut to fit the token budget]", n)
}
