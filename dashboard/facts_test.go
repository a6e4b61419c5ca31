package dashboard_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"sessiongraph/internal/apitest"
)

// peanutSession scripts a session whose user says the allergy at turn 1
// and whose THINK builds, recorded at turns 1 to 4, hold it at 1 to 3 and
// lose it at 4 (the history they show no longer reaches turn 1).
func peanutSession(tb testing.TB, s *apitest.Server, in map[string]any) *agent {
	tb.Helper()
	r := &agent{t: tb, s: s, id: openSession(tb, s, in)}
	for i, m := range []string{"I have a peanut allergy", "plan dinners", "with rice", "and Friday?"} {
		r.begin(m)
		r.recordContext("THINK")
		r.end(fmt.Sprintf("Answer %d.", i+1), nil)
	}
	return r
}

// Across sessions: the list page names the sessions whose THINK prompts
// ever held the allergy, each with where it was held and where lost (a
// READER of acme sees acme's only); the reader follows one into its session, which opens with the fact followed
// (the link carries it), the builds that held and lost it marked, and the
// diff that dropped it a click away. The same link opened afresh shows the
// same.
func TestDashboardFindsTheSessionsWhosePromptsHeldAFact(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	held := peanutSession(t, s, map[string]any{"tenant": "acme", "externalKey": "allergic"})
	other := &agent{t: t, s: s, id: openSession(t, s, map[string]any{"tenant": "acme", "externalKey": "not-allergic"})}
	other.begin("plan lunches")
	other.recordContext("THINK")
	elsewhere := &agent{t: t, s: s, id: openSession(t, s, map[string]any{"tenant": "globex", "externalKey": "allergic-at-globex"})}
	elsewhere.begin("Note my peanut allergy")
	elsewhere.recordContext("THINK")

	b := newBrowser(t)
	b.signIn(s.URL, s.AdminKey)
	search := func(who string) {
		t.Helper()
		b.waitFor(who+": the list", `document.querySelector("#held-search") !== null`)
		b.run(who+": open the search", chromedp.Evaluate(`document.querySelector("#held-search").open = true`, nil))
		b.run(who+": type the fact", chromedp.SetValue("#held-text", "peanut allergy", chromedp.ByQuery))
		b.click(who+": search", "#held-go")
	}
	search("the admin")
	b.waitFor("a session of each tenant, every build read", textOf("#held-summary")+` === "2 sessions in the newest 6 THINK builds (every build read)." && `+
		`[...document.querySelectorAll("#held-sessions a")].map(a => a.textContent).join() === "allergic-at-globex,allergic"`)
	b.waitFor("where each held the fact and lost it", textOf(`#held-sessions li[data-session="`+held.id+`"] .held-where`)+` === "held at turns 1–3 · lost at turn 4" && `+
		textOf(`#held-sessions li[data-session="`+elsewhere.id+`"] .held-where`)+` === "held at turn 1 · never lost"`)
	b.requireAccessible("the fact search's results")

	// A READER of acme finds acme's session only, and follows it the same way.
	reader := createKey(t, s, "READER", "acme")
	b.click("sign out", "#sign-out")
	b.signIn(s.URL, reader)
	b.waitFor("signed in as a reader", textOf("#viewer-role")+` === "READER"`)
	search("the reader")
	b.waitFor("acme's session only", textOf("#held-summary")+` === "1 sessions in the newest 5 THINK builds (every build read)." && `+
		`[...document.querySelectorAll("#held-sessions a")].map(a => a.textContent).join() === "allergic" && `+
		textOf(`#held-sessions li[data-session="`+held.id+`"] .held-where`)+` === "held at turns 1–3 · lost at turn 4"`)

	b.click("open it", "#held-sessions a")
	b.waitFor("its session, on THINK, with the fact in the address", `location.hash.includes("`+held.id+`") && `+
		`new URLSearchParams(location.hash.split("?")[1]).get("fact") === "peanut allergy" && `+
		`document.querySelector("#tab-THINK")?.getAttribute("aria-selected") === "true"`)
	followed := func(what string) {
		t.Helper()
		b.waitFor(what+": the fact followed", `document.querySelector("#fact-text")?.value === "peanut allergy" && `+
			`[...document.querySelectorAll("#fact-turns li")].map(e => e.dataset.turn + ":" + e.dataset.held).join() === "1:held,2:held,3:held,4:missing"`)
		b.waitFor(what+": where it was held and lost", textOf("#fact-where")+` === "THINK: held at turns 1–3 · lost at turn 4." && `+
			`/Held at turn 3, missing from turn 4/.test(`+textOf("#fact-loss")+`)`)
		b.waitFor(what+": the chart marks each build", `[...document.querySelectorAll("#receipt-chart .receipt")].map(e => e.dataset.turn + ":" + e.dataset.fact).join() === "1:held,2:held,3:held,4:missing"`)
	}
	followed("from the search")
	b.requireAccessible("the session with the fact followed")
	b.click("compare the two builds", "#fact-diff")
	b.waitFor("the diff removed the allergy's line",
		`[...document.querySelectorAll("#receipt-diff-lines .diff-del")].some(e => /peanut allergy/.test(e.textContent))`)

	var link string
	b.run("read the address", chromedp.Evaluate(`location.href`, &link))
	u, err := url.Parse(link)
	if err != nil || !strings.HasPrefix(u.Fragment, "/sessions/"+held.id+"?") {
		t.Fatalf("the address is not the session's: %s", link)
	}
	b.run("open the link afresh", chromedp.Navigate("about:blank"), chromedp.Navigate(link))
	followed("by its link")
	if errs := b.pageErrors(); len(errs) > 0 {
		t.Fatalf("the page logged errors: %v", errs)
	}
}
