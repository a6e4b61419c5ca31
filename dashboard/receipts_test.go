package dashboard_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"sessiongraph/internal/apitest"
)

// recordContext records the node's build for the current turn, as a
// runtime does when it sends the prompt.
func (r *agent) recordContext(node string) {
	r.t.Helper()
	r.do(`mutation($id: ID!, $n: ContextNode!) { recordContext(input: {sessionID: $id, node: $n}) { receipt { id } } }`, map[string]any{"n": node})
}

// seedReceipts scripts a session that records THINK at three turns (two
// curries read; then a dessert, Kheer, and REPLY too; then nothing new)
// and returns its id.
func seedReceipts(tb testing.TB, s *apitest.Server) string {
	tb.Helper()
	r := &agent{t: tb, s: s, id: openSession(tb, s, map[string]any{"tenant": "acme", "externalKey": "receipts-chat"})}
	r.begin("Find me an Indian dinner")
	r.read("recipes", map[string]any{"id": uuid.NewString(), "name": "Dal Tadka"}, map[string]any{"id": uuid.NewString(), "name": "Chana Masala"})
	r.recordContext("THINK")
	r.end("Dal Tadka or Chana Masala?", nil)
	r.begin("And a dessert")
	r.read("recipes", map[string]any{"id": uuid.NewString(), "name": "Kheer"})
	r.recordContext("THINK")
	r.recordContext("REPLY")
	r.end("Kheer.", nil)
	r.begin("Thanks")
	r.recordContext("THINK")
	return r.id
}

// What the model saw: a scripted session records THINK at three turns
// (two curries read; then a dessert, Kheer; then nothing new), and the
// session view charts each build's sections and shows the diff the script
// implies: from turn 1 to turn 2, recipe_3 entered the active tier and
// nothing left any tier, and the text gained Kheer's line.
func TestDashboardShowsWhatTheModelSawAndHowItChanged(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	id := seedReceipts(t, s)

	b := newBrowser(t)
	b.signIn(s.URL, s.AdminKey)
	b.run("open the session", chromedp.Navigate(fmt.Sprintf("%s/#/sessions/%s", s.URL, id)))
	b.waitFor("three THINK builds charted", `document.querySelectorAll("#receipt-chart .receipt").length === 3 && `+
		`[...document.querySelectorAll("#receipt-chart .receipt")].map(e => e.dataset.turn).join() === "1,2,3" && `+
		`document.querySelectorAll("#receipt-chart .receipt .stack-part").length > 3`)
	b.waitFor("the nodes recorded", `[...document.querySelectorAll("#receipt-node option")].map(o => o.value).join() === "THINK,REPLY"`)

	// Turn 1 against turn 2.
	b.run("choose turn 1 and turn 2", chromedp.Evaluate(`(() => {
		const f = document.querySelector("#receipt-from"), t = document.querySelector("#receipt-to");
		f.selectedIndex = 0; t.selectedIndex = 1; return true; })()`, nil))
	b.click("compare", "#receipt-compare")
	b.waitFor("recipe_3 entered the active tier, and nothing else moved",
		`[...document.querySelectorAll("#receipt-diff-tiers [data-entered]")].map(e => e.dataset.entered).join() === "recipe_3" && `+
			`document.querySelectorAll("#receipt-diff-tiers [data-left]").length === 0`)
	b.waitFor("Kheer's line added", `[...document.querySelectorAll("#receipt-diff-lines .diff-add")].some(e => /recipe_3.*Kheer/.test(e.textContent))`)
	b.waitFor("no curry's line removed without coming back", `(() => {
		const text = (sel) => [...document.querySelectorAll(sel)].map(e => e.textContent);
		const removed = text("#receipt-diff-lines .diff-del"), added = text("#receipt-diff-lines .diff-add");
		return ["Dal Tadka", "Chana Masala"].every(n => !removed.some(l => l.includes(n)) || added.some(l => l.includes(n))); })()`)
	b.waitFor("the sections table", `document.querySelectorAll("#receipt-diff-sections tbody tr").length > 0`)
	b.run("scroll to the diff", chromedp.Evaluate(`document.querySelector("#section-receipts").scrollIntoView({block: "start"})`, nil))
	b.screenshot("dashboard-receipts.png", false)
	b.requireAccessible("what the model saw, with a diff")

	// The prompt as sent at turn 2 is there in full.
	b.run("open turn 2's prompt", chromedp.Evaluate(`(() => { document.querySelector('#receipt-chart .receipt[data-turn="2"] details').open = true; return true; })()`, nil))
	b.waitFor("turn 2's prompt names Kheer", `/Kheer/.test(document.querySelector('#receipt-chart .receipt[data-turn="2"] pre').textContent)`)
	if errs := b.pageErrors(); len(errs) > 0 {
		t.Fatalf("the page logged errors: %v", errs)
	}
}

// "Why did the agent forget the user's peanut allergy?" in the cockpit:
// the admin types the fact once, sees THINK held it at turns 1 to 3 and
// not at 4, and one click shows the diff that dropped it.
func TestDashboardFollowsAFactToTheBuildThatLostIt(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	r := &agent{t: t, s: s, id: openSession(t, s, map[string]any{"tenant": "acme", "externalKey": "peanut"})}
	for i, m := range []string{"I have a peanut allergy", "plan dinners", "with rice", "and Friday?"} {
		r.begin(m)
		r.recordContext("THINK")
		r.end(fmt.Sprintf("Answer %d.", i+1), nil)
	}

	b := newBrowser(t)
	b.signIn(s.URL, s.AdminKey)
	b.run("open the session", chromedp.Navigate(fmt.Sprintf("%s/#/sessions/%s", s.URL, r.id)))
	b.waitFor("four THINK builds", `document.querySelectorAll("#receipt-chart .receipt").length === 4`)
	b.run("type the fact", chromedp.SetValue("#fact-text", "Peanut allergy", chromedp.ByQuery))
	b.click("follow it", "#fact-trace")
	b.waitFor("held at turns 1-3, missing at 4",
		`[...document.querySelectorAll("#fact-turns li")].map(e => e.dataset.turn + ":" + e.dataset.held).join() === "1:held,2:held,3:held,4:missing"`)
	b.waitFor("the loss named", `/Held at turn 3, missing from turn 4/.test(document.querySelector("#fact-loss")?.textContent)`)
	b.click("compare the two builds", "#fact-diff")
	b.waitFor("the diff removed the allergy's line",
		`[...document.querySelectorAll("#receipt-diff-lines .diff-del")].some(e => /peanut allergy/.test(e.textContent))`)
	if errs := b.pageErrors(); len(errs) > 0 {
		t.Fatalf("the page logged errors: %v", errs)
	}
}

// Compare at any depth: in a session of 80 turns with two builds each, the
// view loads the newest 100 (turns 31 to 80); the allergy was said at
// turn 10 and left THINK's prompt at turn 13, and Follow then Compare
// shows that diff without loading older builds.
func TestDashboardComparesALossOlderThanTheLoadedBuilds(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	r := &agent{t: t, s: s, id: openSession(t, s, map[string]any{"tenant": "acme", "externalKey": "eighty"})}
	for turn := 1; turn <= 80; turn++ {
		m := fmt.Sprintf("question %d", turn)
		if turn == 10 {
			m = "I have a peanut allergy"
		}
		r.begin(m)
		r.recordContext("THINK")
		r.recordContext("REPLY")
		r.end("ok", nil)
	}

	b := newBrowser(t)
	b.signIn(s.URL, s.AdminKey)
	b.run("open the session", chromedp.Navigate(fmt.Sprintf("%s/#/sessions/%s", s.URL, r.id)))
	b.waitFor("the newest 100 builds", `/Builds of turns 31–80: 100 of 160 recorded/.test(document.querySelector("#receipt-range")?.textContent)`)
	b.run("type the fact", chromedp.SetValue("#fact-text", "peanut allergy", chromedp.ByQuery))
	b.click("follow it", "#fact-trace")
	b.waitFor("the loss named", `/Held at turn 12, missing from turn 13/.test(document.querySelector("#fact-loss")?.textContent)`)
	b.click("compare the two builds", "#fact-diff")
	b.waitFor("the diff removed the allergy's line",
		`[...document.querySelectorAll("#receipt-diff-lines .diff-del")].some(e => /peanut allergy/.test(e.textContent))`)
	var text string
	b.run("read the diff", chromedp.Evaluate(`document.querySelector("#receipt-diff").textContent`, &text))
	if strings.Contains(text, "INVALID_ID") || strings.Contains(text, "Could not") {
		t.Fatalf("the compare failed: %s", text)
	}
	if errs := b.pageErrors(); len(errs) > 0 {
		t.Fatalf("the page logged errors: %v", errs)
	}
}

// A long session's early builds are a click away: the view says which
// turns' builds it shows and how many there are, and loads older ones.
func TestDashboardPagesBackThroughRecordedBuilds(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	r := &agent{t: t, s: s, id: openSession(t, s, map[string]any{"tenant": "acme", "externalKey": "long"})}
	for turn := 1; turn <= 52; turn++ {
		r.begin(fmt.Sprintf("question %d", turn))
		r.recordContext("THINK")
		r.recordContext("REPLY")
		r.end("ok", nil)
	}

	b := newBrowser(t)
	b.signIn(s.URL, s.AdminKey)
	b.run("open the session", chromedp.Navigate(fmt.Sprintf("%s/#/sessions/%s", s.URL, r.id)))
	b.waitFor("the newest 100 builds, said so", `/Builds of turns 3–52: 100 of 104 recorded/.test(document.querySelector("#receipt-range")?.textContent)`)
	b.waitFor("THINK from turn 3", `[...document.querySelectorAll("#receipt-chart .receipt")].map(e => e.dataset.turn)[0] === "3"`)
	b.click("load older builds", "#receipt-older")
	b.waitFor("every build", `/Builds of turns 1–52: 104 of 104 recorded/.test(document.querySelector("#receipt-range")?.textContent) && !document.querySelector("#receipt-older")`)
	b.waitFor("THINK from turn 1", `[...document.querySelectorAll("#receipt-chart .receipt")].map(e => e.dataset.turn)[0] === "1" && `+
		`document.querySelectorAll("#receipt-chart .receipt").length === 52`)
	if errs := b.pageErrors(); len(errs) > 0 {
		t.Fatalf("the page logged errors: %v", errs)
	}
}

// The recorded builds' bars are scaled to the largest build, with the
// budget marked; each section's tokens show across the turns; and a diff
// has an address that opens it.
func TestDashboardReceiptsScaleToTheLargestBuildTrendAndLinkTheirDiff(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	id := seedReceipts(t, s)

	b := newBrowser(t)
	b.signIn(s.URL, s.AdminKey)
	b.run("open the session", chromedp.Navigate(fmt.Sprintf("%s/#/sessions/%s", s.URL, id)))
	b.waitFor("three THINK builds charted", `document.querySelectorAll("#receipt-chart .receipt").length === 3`)
	b.waitFor("the largest build fills its bar", `(() => {
		const bars = [...document.querySelectorAll("#receipt-chart .receipt .stack")];
		const filled = bars.map(bar => [...bar.querySelectorAll(".stack-part")].reduce((w, p) => w + p.getBoundingClientRect().width, 0) / bar.getBoundingClientRect().width);
		return Math.max(...filled) > 0.95; })()`)
	b.waitFor("each section's trend, a column a build", `document.querySelectorAll("#receipt-trend thead th").length === 4 && `+
		`[...document.querySelectorAll("#receipt-trend thead th")].slice(1).map(e => e.textContent).join() === "T1,T2,T3" && `+
		`document.querySelector('#receipt-trend tr[data-section="active_entities"]') !== null`)

	// Compare turn 1 with turn 2: the address names the diff, and opening it
	// in a new tab shows the same diff.
	b.run("choose turn 1 and turn 2", chromedp.Evaluate(`(() => {
		const f = document.querySelector("#receipt-from"), t = document.querySelector("#receipt-to");
		f.selectedIndex = 0; t.selectedIndex = 1; return true; })()`, nil))
	b.click("compare", "#receipt-compare")
	b.waitFor("Kheer's line added", `[...document.querySelectorAll("#receipt-diff-lines .diff-add")].some(e => /Kheer/.test(e.textContent))`)
	var link string
	b.run("read the address", chromedp.Evaluate(`location.href`, &link))
	if !strings.Contains(link, "diff=") {
		t.Fatalf("the address does not name the diff: %s", link)
	}
	b.run("open the link afresh", chromedp.Navigate("about:blank"), chromedp.Navigate(link))
	b.waitFor("the linked diff, opened", `[...document.querySelectorAll("#receipt-diff-lines .diff-add")].some(e => /Kheer/.test(e.textContent))`)
	if errs := b.pageErrors(); len(errs) > 0 {
		t.Fatalf("the page logged errors: %v", errs)
	}
}
