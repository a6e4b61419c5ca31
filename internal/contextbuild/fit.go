package contextbuild

import (
	"fmt"
	"strings"
)

// separator ends every section: the text is the sections, each followed by
// a blank line.
const separator = "\n\n"

// Additive is implemented by counters whose counts add up across a blank
// line followed by "##": cl100k_base and o200k_base end a pre-token at a run
// of newlines before "#", so no token spans two sections, and the count of
// the whole text is the sum of the sections' counts. Such texts are
// tokenized once; others are recounted whole.
type Additive interface {
	AddsUpAcrossSections() bool
}

// draft is a section before fitting: a title and its lines.
type draft struct {
	name  string
	title string
	lines []string
}

func section(name, title string, lines ...string) draft {
	return draft{name: name, title: title, lines: lines}
}

// text is the section of its first n lines, made in one allocation.
func (d draft) text(n int) string {
	size := len("## ") + len(d.title) + len("\n") + len(separator) + max(n-1, 0)
	for _, l := range d.lines[:n] {
		size += len(l)
	}
	var b strings.Builder
	b.Grow(size)
	b.WriteString("## ")
	b.WriteString(d.title)
	b.WriteString("\n")
	for i, l := range d.lines[:n] {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(l)
	}
	b.WriteString(separator)
	return b.String()
}

// fit lays out drafts in priority order within budget tokens: a section that
// does not fit whole keeps as many of its first lines as fit, with a note of
// what was cut; one whose title alone does not fit is dropped. The order is
// strict: once a section is cut or dropped, every section after it is
// dropped, so that nothing of a lower priority stays while a higher one
// lost lines. It returns the text, its exact token count, and the sections.
func fit(drafts []draft, budget int, c Counter) (text string, total int, sections []Section, notes []string) {
	var parts []string
	cut := "" // the first section cut or dropped, once there is one
	for _, d := range drafts {
		if len(d.lines) == 0 {
			continue
		}
		if cut != "" {
			notes = append(notes, fmt.Sprintf("section %s dropped: section %s, of a higher priority, was cut to fit the budget of %d tokens", d.name, cut, budget))
			continue
		}
		room := budget - total
		n := len(d.lines)
		body := d.text(n)
		cost := c.Count(body)
		truncated := false
		for cost > room && n > 0 {
			n = shrink(d, n, room, c)
			truncated = true
			body = withCutNote(d, n)
			cost = c.Count(body)
		}
		if n == 0 || cost > room {
			notes = append(notes, fmt.Sprintf("section %s dropped: the budget of %d tokens was used up", d.name, budget))
			cut = d.name
			continue
		}
		if truncated {
			notes = append(notes, fmt.Sprintf("section %s cut to %d of %d lines to fit the budget", d.name, n, len(d.lines)))
			cut = d.name
		}
		parts = append(parts, body)
		total += cost
		sections = append(sections, Section{Name: d.name, Text: strings.TrimSuffix(body, separator), TokenCount: cost, Truncated: truncated})
	}
	text = strings.Join(parts, "")
	if a, ok := c.(Additive); !ok || !a.AddsUpAcrossSections() {
		total = c.Count(text)
		// A counter that does not add up may exceed by a token at a join.
		for total > budget && len(sections) > 0 {
			last := len(sections) - 1
			notes = append(notes, fmt.Sprintf("section %s dropped to keep the joined text within the budget of %d tokens", sections[last].Name, budget))
			sections, parts = sections[:last], parts[:last]
			text = strings.Join(parts, "")
			total = c.Count(text)
		}
	}
	return text, total, sections, notes
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

// withCutNote is a section cut to its first n lines, saying what was cut.
func withCutNote(d draft, n int) string {
	return strings.TrimSuffix(d.text(n), separator) +
		fmt.Sprintf("\n[%d more lines cut to fit the token budget]", len(d.lines)-n) + separator
}
