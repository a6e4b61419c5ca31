package dashboard_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// visible is the expression that holds when the element matching sel is on the page and not hidden.
func visible(sel string) string {
	return fmt.Sprintf(`(() => { const el = document.querySelector(%q); return !!el && !el.hidden; })()`, sel)
}

// The session view starts with the newest 50 turns and events, and pages
// back from there with Relay cursors (before: and last:) until the first,
// adding the older rows below what is shown, newest first as
// docs/dashboard.md says; the buttons go when there is nothing older, and
// live turns and events still land on top.
func TestDashboardPagesBackThroughTurnsAndEvents(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	id := openSession(t, s, map[string]any{"tenant": "acme", "externalKey": "long-chat"})
	r := &agent{t: t, s: s, id: id}
	for n := 1; n <= 60; n++ {
		r.begin(fmt.Sprintf("question %d", n))
		r.end(fmt.Sprintf("answer %d", n), nil)
	}
	newest := newestEvent(t, s, id)
	require.Greater(t, newest, 100, "more than two pages of events")
	b := newBrowser(t)
	b.signInToSession(s.URL, s.AdminKey, id)

	turns := `[...document.querySelectorAll("#turns .turn")].map(li => Number(li.dataset.turn))`
	b.waitFor("the newest 50 turns", textOf("#session-turn")+` === "60" && `+turns+`.join() === Array.from({length: 50}, (_, i) => 60 - i).join()`)
	b.waitFor("a way to older turns", visible("#older-turns"))
	b.click("show older turns", "#older-turns")
	b.waitFor("all 60 turns, newest first", turns+`.join() === Array.from({length: 60}, (_, i) => 60 - i).join()`)
	b.waitFor("no older turns", `!`+visible("#older-turns"))

	events := `[...document.querySelectorAll("#events tbody tr")].map(tr => Number(tr.dataset.sequence))`
	newestFirst := func(from, to int) string {
		return fmt.Sprintf(`%s.join() === Array.from({length: %d}, (_, i) => %d - i).join()`, events, from-to+1, from)
	}
	b.waitFor("the newest 50 events", newestFirst(newest, newest-49))
	b.click("show older events", "#older-events")
	b.waitFor("100 events", newestFirst(newest, newest-99))
	b.click("show older events again", "#older-events")
	b.waitFor("every event, back to the first", newestFirst(newest, 1))
	b.waitFor("no older events", `!`+visible("#older-events"))

	// Live events still go on top, and the older rows stay.
	r.begin("one more")
	b.waitFor("the live event on top", newestFirst(newest+1, 1))
	b.waitFor("turn 61 on top of the older ones", turns+`.join() === Array.from({length: 61}, (_, i) => 61 - i).join()`)
	require.Empty(t, b.pageErrors(), "the page logged no error")
}

// A live session's log keeps the newest 200 events, and the ones it let go
// come back with "Show older events", although they came live, without a
// cursor: the page finds the oldest row's cursor by its sequence.
func TestDashboardEventLogStaysBoundedAndPagesBackFromLiveRows(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	id := openSession(t, s, map[string]any{"tenant": "acme", "externalKey": "busy-chat"})
	r := &agent{t: t, s: s, id: id}
	b := newBrowser(t)
	b.signInToSession(s.URL, s.AdminKey, id)
	b.waitFor("its one event", `document.querySelectorAll("#events tbody tr").length === 1 && !`+visible("#older-events"))
	b.waitFor("live updates", `document.querySelector("#live").dataset.state === "live"`)

	for n := 1; n <= 110; n++ {
		r.begin(fmt.Sprintf("question %d", n))
		r.end(fmt.Sprintf("answer %d", n), nil)
	}
	newest := newestEvent(t, s, id)
	require.Equal(t, 221, newest)
	events := `[...document.querySelectorAll("#events tbody tr")].map(tr => Number(tr.dataset.sequence))`
	newestFirst := func(from, to int) string {
		return fmt.Sprintf(`%s.join() === Array.from({length: %d}, (_, i) => %d - i).join()`, events, from-to+1, from)
	}
	b.waitFor("the newest 200 events", newestFirst(newest, newest-199)+` && `+textOf("#events-count")+` === "221 events, the newest 200 shown."`)
	b.waitFor("a way to the older ones", visible("#older-events"))
	b.click("show older events", "#older-events")
	b.waitFor("every event", newestFirst(newest, 1)+` && `+textOf("#events-count")+` === "221 events."`)
	b.waitFor("nothing older", `!`+visible("#older-events"))
	require.Empty(t, b.pageErrors(), "the page logged no error")
}
