package dashboard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// A notice the list raises belongs to the list: opening a session from it
// takes the notice away at once, not six seconds later.
func TestListNoticeDoesNotFollowToASession(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	id := openSession(t, s, map[string]any{"tenant": "acme", "externalKey": "gone-soon"})
	s.MustDo(t, `mutation($id: ID!) { expireSession(input: {id: $id}) { session { id } } }`, map[string]any{"id": id}, nil)
	b := openList(t, s, s.AdminKey, 1)
	b.click("bulk expire", "#bulk-expire")
	b.waitFor("the list's notice", lastNotice()+`.startsWith("No active session matches")`)
	b.run("open the session", navigate("#/sessions/"+id))
	b.waitFor("the session", textOf("#session-title")+`.startsWith("gone-soon")`)
	b.waitWithin("no list notice on the session page", noNotices, 500*time.Millisecond)
	require.Empty(t, b.pageErrors(), "the page logged no error")
}

// The refs table's last column, retain or release, has a header.
func TestRefsActionsColumnHasAHeader(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	id := seedKitchen(t, s)
	b := newBrowser(t)
	b.signInToSession(s.URL, s.AdminKey, id)
	b.waitFor("the refs", `document.querySelectorAll("#refs tbody tr").length === 7`)
	var headers []string
	b.run("read the headers", chromedp.Evaluate(`[...document.querySelectorAll("#refs thead th")].map(th => th.textContent.trim())`, &headers))
	require.Len(t, headers, 8)
	for i, text := range headers {
		require.NotEmpty(t, text, "column %d has a header", i+1)
	}
	require.Equal(t, "Retain or release", headers[7])
	require.Empty(t, b.pageErrors(), "the page logged no error")
}

// A link names a node's context: #/sessions/<id>?node=THINK opens the THINK
// tab, and choosing a tab puts it in the address for the next link.
func TestSessionDeepLinksToANode(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	id := seedKitchen(t, s)
	b := newBrowser(t)
	b.signIn(s.URL, s.AdminKey)
	b.waitFor("the sessions list", `document.querySelector("#sessions") !== null`)
	b.run("follow a link to THINK", navigate("#/sessions/"+id+"?node=THINK"))
	b.waitFor("the THINK tab open", `document.querySelector("#tab-THINK")?.getAttribute("aria-selected") === "true" && `+
		`document.querySelector('#context-panel .ctx-build[data-node="THINK"]') !== null`)
	b.click("choose REPLY", "#tab-REPLY")
	b.waitFor("REPLY in the address", fmt.Sprintf(`location.hash === %q`, "#/sessions/"+id+"?node=REPLY"))
	b.run("reload", chromedp.Reload())
	b.waitFor("REPLY open again", `document.querySelector("#tab-REPLY")?.getAttribute("aria-selected") === "true" && `+
		`document.querySelector('#context-panel .ctx-build[data-node="REPLY"]') !== null`)
	require.Empty(t, b.pageErrors(), "the page logged no error")
}

// The token bars are scaled to the build, not to the budget: the largest
// section fills its bar, and the total's bar marks where the budget is.
func TestContextBarsScaleToTheBuild(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	id := seedKitchen(t, s)
	b := newBrowser(t)
	b.signInToSession(s.URL, s.AdminKey, id)
	b.click("open THINK", "#tab-THINK")
	b.waitFor("THINK's sections", `document.querySelectorAll('#context-panel .ctx-build[data-node="THINK"] .ctx-section .bar').length > 1`)
	b.waitFor("the largest section fills its bar", `Math.max(...[...document.querySelectorAll("#context-panel .ctx-section .bar")]
		.map(b => b.firstChild.getBoundingClientRect().width / b.getBoundingClientRect().width)) > 0.99`)
	b.waitFor("the total's bar marks the budget", `document.querySelector("#context-panel .ctx-build > .bar .budget-marker") !== null`)
	require.Empty(t, b.pageErrors(), "the page logged no error")
}

// At a phone's 390 px the session view does not scroll sideways and the
// receipt bars are drawn (wider than nothing).
func TestSessionFitsAPhone(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	id := seedReceipts(t, s)
	b := newBrowser(t)
	b.run("a phone's viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	b.signInToSession(s.URL, s.AdminKey, id)
	b.waitFor("the receipts", `document.querySelectorAll("#receipt-chart .receipt .stack").length === 3`)
	b.waitFor("the context", `document.querySelectorAll("#context-panel .ctx-section .bar").length > 0`)
	var fit struct {
		ScrollWidth, Width int
		Stacks, Bars       []float64
		Wide               []string
	}
	b.run("measure", chromedp.Evaluate(`({
		scrollWidth: document.documentElement.scrollWidth, width: window.innerWidth,
		stacks: [...document.querySelectorAll("#receipt-chart .stack")].map(e => e.getBoundingClientRect().width),
		bars: [...document.querySelectorAll("#context-panel .ctx-section .bar")].map(e => e.getBoundingClientRect().width),
		wide: [...document.querySelectorAll("main *")].filter(e => e.getBoundingClientRect().right > 390.5 && !e.closest(".table-wrap")).slice(0, 8).map(e => e.tagName + "." + e.className + "#" + e.id),
	})`, &fit))
	require.LessOrEqual(t, fit.ScrollWidth, 390, "the page does not scroll sideways: %v", fit.Wide)
	require.Equal(t, 390, fit.Width, "the phone shows the page at its own width")
	for _, w := range fit.Stacks {
		require.Greater(t, w, 100.0, "a receipt's bar is drawn")
	}
	for _, w := range fit.Bars {
		require.Greater(t, w, 50.0, "a section's bar is drawn")
	}
	require.Empty(t, b.pageErrors(), "the page logged no error")
}

// A search for something shaped like a key (a word with a digit and a
// separator) matches keys and users without reading any message: a session
// whose message mentions it is not listed, unless the search is quoted.
func TestListKeySearchDoesNotReadMessages(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	openSession(t, s, map[string]any{"tenant": "acme", "externalKey": "order-1234"})
	r := &agent{t: t, s: s, id: openSession(t, s, map[string]any{"tenant": "acme", "externalKey": "talks-about-it"})}
	r.begin("where is my order-1234?")
	r.end("On its way.", nil)
	b := openList(t, s, s.AdminKey, 2)

	b.run("search a key", chromedp.SendKeys("#filter-q", "ORDER-1234", chromedp.ByQuery), chromedp.Click("#search", chromedp.ByQuery))
	b.waitFor("the key's session only", rowKeys+` === "order-1234" && `+textOf("#list-summary")+` === "1–1 of 1 sessions"`)
	b.waitFor("the hint says why", textOf("#search-hint")+` === "“ORDER-1234” looks like a key: keys and users only. Put it in quotes to search messages too."`)

	b.run("search it in quotes", chromedp.SetValue("#filter-q", `"order-1234"`, chromedp.ByQuery), chromedp.Click("#search", chromedp.ByQuery))
	b.waitFor("the message's session too", `[...document.querySelectorAll("#sessions tbody tr")].map(r => r.dataset.key).sort().join() === "order-1234,talks-about-it" && `+
		textOf("#search-hint")+` === ""`)
	require.Empty(t, b.pageErrors(), "the page logged no error")
}

// Under write load the list stays calm: agents writing turns to sessions on
// the page refresh those rows in place, new sessions are offered as "N
// changes — refresh", and the pager is never disabled by the feed.
func TestListPagerStaysEnabledUnderWrites(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	var agents []*agent
	for i := range 25 {
		id := openSession(t, s, map[string]any{"tenant": "acme", "externalKey": fmt.Sprintf("w-%02d", i)})
		if i >= 20 { // the newest five are on the first page
			agents = append(agents, &agent{t: t, s: s, id: id})
		}
	}
	b := openList(t, s, s.AdminKey, 20)
	b.run("watch the pager", chromedp.Evaluate(`(() => {
		window.pagerDisabled = 0;
		const next = document.querySelector("#next-page");
		new MutationObserver(() => { if (next.disabled) window.pagerDisabled++; }).observe(next, { attributes: true });
		return true; })()`, nil))

	done := make(chan struct{})
	go func() { // two agents writing turns, and new sessions opening
		defer close(done)
		for i := range 8 {
			for _, a := range agents[:2] {
				a.begin(fmt.Sprint("turn ", i))
				a.end("ok", nil)
			}
			openSession(t, s, map[string]any{"tenant": "acme", "externalKey": fmt.Sprintf("new-%02d", i)})
		}
	}()
	b.waitFor("the writers' turns in place", textOf(`#sessions tr[data-key="w-20"] td:nth-child(6)`)+` === "8" && `+
		textOf(`#sessions tr[data-key="w-21"] td:nth-child(6)`)+` === "8"`)
	<-done
	b.waitFor("the new sessions offered", textOf("#pending-changes")+` === "8 changes — refresh"`)
	var disabled int
	b.run("read the pager's record", chromedp.Evaluate(`window.pagerDisabled + (document.querySelector("#next-page").disabled ? 1 : 0)`, &disabled))
	require.Zero(t, disabled, "the feed never disabled the pager")

	b.click("refresh", "#pending-changes")
	b.waitFor("the new sessions listed", textOf("#list-summary")+` === "1–20 of 33 sessions" && `+rowKeys+`.startsWith("new-07,")`)
	require.Empty(t, b.pageErrors(), "the page logged no error")
}

// A feed that brings changes late says so: an expiry held back from the
// feed by a long transaction arrives seconds after it happened, and the
// list shows how far behind the feed is.
func TestListShowsTheFeedBehind(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	ctx := context.Background()
	late := openSession(t, s, map[string]any{"tenant": "acme", "externalKey": "late"})
	b := openList(t, s, s.AdminKey, 1)
	b.waitFor("no lag shown", `document.querySelector("#feed-lag").hidden`)

	held, err := s.DB.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer held.Rollback()
	_, err = held.ExecContext(ctx, `SELECT pg_current_xact_id()`) // holds the feed's horizon
	require.NoError(t, err)
	s.MustDo(t, `mutation($id: ID!) { expireSession(input: {id: $id}) { session { id } } }`, map[string]any{"id": late}, nil)
	expired := time.Now()
	// The production condition: the feed is held back for longer than the
	// list tolerates (5 s) before it can deliver the expiry.
	require.Eventually(t, func() bool { return time.Since(expired) > 6*time.Second }, 10*time.Second, 100*time.Millisecond)
	require.NoError(t, held.Commit())
	b.waitFor("the lag shown", `!document.querySelector("#feed-lag").hidden && /^Live feed \d+ s behind$/.test(`+textOf("#feed-lag")+`)`)
	b.waitFor("the row expired in place", textOf(`#sessions tr[data-key="late"] td:nth-child(5)`)+` === "EXPIRED"`)
	require.Empty(t, b.pageErrors(), "the page logged no error")
}

// A link names a turn: #/sessions/<id>?turn=2 scrolls to turn 2 and marks
// it; a turn's own heading is that link.
func TestSessionDeepLinksToATurn(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	id := seedKitchen(t, s)
	b := newBrowser(t)
	b.signIn(s.URL, s.AdminKey)
	b.waitFor("the sessions list", `document.querySelector("#sessions") !== null`)
	b.run("follow a link to turn 2", navigate("#/sessions/"+id+"?turn=2"))
	b.waitFor("turn 2 marked and scrolled to", `document.querySelector("#turn-2")?.classList.contains("linked") && `+
		`Math.abs(document.querySelector("#turn-2").getBoundingClientRect().top) < 5 && document.activeElement.id === "turn-2"`)
	b.click("turn 3's link", "#turn-3 .turn-link")
	b.waitFor("turn 3 in the address and marked", fmt.Sprintf(`location.hash === %q && `, "#/sessions/"+id+"?turn=3")+
		`document.querySelector("#turn-3").classList.contains("linked") && !document.querySelector("#turn-2").classList.contains("linked")`)
	require.Empty(t, b.pageErrors(), "the page logged no error")
}
