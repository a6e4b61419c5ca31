package dashboard_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// noNotices is the expression that holds when no notice is on screen.
const noNotices = `document.querySelectorAll("#notices .notice").length === 0`

// A notice belongs to the view that raised it: leaving a session's page
// takes its notices away, and one that its slow request raises after the
// admin has left does not show on the next session's page.
func TestDashboardNoticesStayWithTheirSession(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	first := openSession(t, s, map[string]any{"tenant": "acme", "externalKey": "first-chat"})
	second := openSession(t, s, map[string]any{"tenant": "acme", "externalKey": "second-chat"})
	r := &agent{t: t, s: s, id: first}
	r.begin("What can I cook?")
	r.read("recipes", map[string]any{"id": uuid.NewString(), "name": "Dal Tadka"})
	r.retain("recipe_1", "user loves it")
	b := newBrowser(t)
	b.signIn(s.URL, s.AdminKey)
	b.waitFor("the sessions list", `document.querySelector("#sessions") !== null`)

	// A notice on screen goes with its page.
	b.run("open the first session", navigate("#/sessions/"+first))
	b.click("release recipe_1", `#refs tr[data-ref="recipe_1"] button.act`)
	b.waitFor("the notice", lastNotice()+`.startsWith("recipe_1 is released")`)
	b.run("open the second session", navigate("#/sessions/"+second))
	b.waitFor("the second session", textOf("#session-title")+`.startsWith("second-chat")`)
	b.waitFor("no notice about the first session", noNotices)

	// A notice raised after its page was left never shows.
	b.run("back to the first session", navigate("#/sessions/"+first))
	b.waitFor("the first session", textOf("#session-title")+`.startsWith("first-chat")`)
	// The page marks when it has handled the expiry's answer: the mark is
	// set in a task queued as the answer is read, so after the code that
	// awaited it has run.
	b.run("mark the expiry's answer", chromedp.Evaluate(`(() => {
		const fetchOnce = window.fetch;
		window.fetch = async (url, init) => {
			const res = await fetchOnce(url, init);
			if (String(init?.body).includes("ExpireSession")) {
				const text = res.text.bind(res);
				res.text = () => text().then((body) => { setTimeout(() => { window.expiryAnswered = true; }); return body; });
			}
			return res;
		};
	})()`, nil))
	b.click("expire", "#expire-session")
	b.run("confirm, and leave at once", chromedp.WaitVisible("#dialog-confirm", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("#dialog-confirm").click(); location.hash = "#/sessions/`+second+`"`, nil))
	b.waitFor("the second session", textOf("#session-title")+`.startsWith("second-chat")`)
	require.Eventually(t, func() bool {
		var out struct{ Session struct{ Status string } }
		s.MustDo(t, `query($id: ID!) { session(id: $id) { status } }`, map[string]any{"id": first}, &out)
		return out.Session.Status == "EXPIRED"
	}, 10*time.Second, 50*time.Millisecond, "the expiry went through")
	b.waitFor("the page has the expiry's answer too", `window.expiryAnswered === true`)
	var shown bool
	b.run("read the notices", chromedp.Evaluate(noNotices, &shown))
	require.True(t, shown, "no notice about the first session on the second's page: %q", b.text())
	require.Empty(t, b.pageErrors(), "the page logged no error")
}
