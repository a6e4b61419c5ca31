package dashboard_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// seedUser gives user ana two sessions in acme and one in globex, and bob
// one in acme. Her kitchen session says the peanut allergy at turn 1, reads
// and retains a recipe, and records THINK at turns 1 to 4, which hold the
// allergy at 1 to 3 and lose it at 4; her support session has two turns
// and no build. It returns the ids of her acme sessions.
func seedUser(t *testing.T, s *apitest.Server) (kitchen, support string) {
	t.Helper()
	k := &agent{t: t, s: s, id: openSession(t, s, map[string]any{"tenant": "acme", "externalKey": "ana-kitchen", "userID": "ana"})}
	for i, m := range []string{"I have a peanut allergy", "plan dinners", "with rice", "and Friday?"} {
		k.begin(m)
		if i == 0 {
			k.read("recipes", map[string]any{"id": uuid.NewString(), "name": "Satay noodles"})
			k.retain("recipe_1", "her favourite")
		}
		k.recordContext("THINK")
		if i == 0 || i == 3 {
			k.modelCall("THINK", "gpt-4o", 500, 0.02, "")
		}
		k.end(fmt.Sprintf("Answer %d.", i+1), nil)
	}
	sp := &agent{t: t, s: s, id: openSession(t, s, map[string]any{"tenant": "acme", "externalKey": "ana-support", "userID": "ana"})}
	sp.begin("My order never came")
	sp.end("Sorry: a refund is on its way.", nil)
	sp.begin("Thanks, and the next one?")
	sp.end("It ships on Monday.", nil)
	g := &agent{t: t, s: s, id: openSession(t, s, map[string]any{"tenant": "globex", "externalKey": "ana-globex", "userID": "ana"})}
	g.begin("Hello from globex")
	g.end("Hi.", nil)
	b := &agent{t: t, s: s, id: openSession(t, s, map[string]any{"tenant": "acme", "externalKey": "bob-kitchen", "userID": "bob"})}
	b.begin("Not ana")
	b.end("Indeed.", nil)
	return k.id, sp.id
}

// rows is the expression for the data-key of each row of a table, joined.
func rows(sel string) string {
	return fmt.Sprintf(`[...document.querySelectorAll(%q)].map(r => r.dataset.key).join()`, sel+" tbody tr")
}

// A user's page: from one of her sessions the admin opens ana's page in
// that tenant and sees her sessions, her turns across them, her tokens,
// the cost of her model calls, what her newest prompts held, and, following
// the allergy through every session, where it was held and lost, a click
// from the session with the fact followed. By address without a tenant it
// shows her sessions in every tenant; a READER key of acme sees only
// acme's, and on a phone the page does not scroll sideways.
func TestDashboardShowsAUserAcrossTheirSessions(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	kitchen, support := seedUser(t, s)
	var tokens struct {
		Sessions struct {
			Edges []struct{ Node struct{ TokenCount int } }
		}
	}
	s.MustDo(t, `{ sessions(where: {userID: "ana", tenant: "acme"}) { edges { node { tokenCount } } } }`, nil, &tokens)
	sum := 0
	for _, e := range tokens.Sessions.Edges {
		sum += e.Node.TokenCount
	}
	require.Len(t, tokens.Sessions.Edges, 2)
	require.Positive(t, sum)

	b := newBrowser(t)
	b.signInToSession(s.URL, s.AdminKey, kitchen)
	b.waitFor("the session's user, a link", textOf("#session-user")+` === "ana"`)
	b.click("open her page", "#session-user")
	b.waitFor("her page, in acme", `location.hash === "#/users/ana?tenant=acme" && `+textOf("#user-title")+` === "User ana" && `+textOf("#user-scope")+` === "Tenant acme"`)
	b.waitFor("her two acme sessions, the most recently active first", rows("#user-sessions")+` === "ana-support,ana-kitchen"`)
	b.waitFor("her counts", textOf("#user-session-count")+` === "2 · 2 active" && `+textOf("#user-turn-count")+` === "6" && `+
		textOf("#user-tokens")+fmt.Sprintf(` === %q`, fmt.Sprintf("%d", sum)))
	b.waitFor("her model calls' cost", textOf("#user-cost")+` === "$0.04 · 2 calls"`)
	b.waitFor("her turns across sessions, newest first",
		`[...document.querySelectorAll("#user-turns .user-turn")].map(e => (e.dataset.session === "`+support+`" ? "support" : "kitchen") + ":" + e.dataset.turn).join() === "support:2,support:1,kitchen:4,kitchen:3,kitchen:2"`)
	b.waitFor("a turn's messages", textOf(`#user-turns .user-turn:first-child .msg-user`)+` === "User: Thanks, and the next one?" && `+
		textOf(`#user-turns .user-turn:first-child .msg-assistant`)+` === "Assistant: It ships on Monday."`)
	b.waitFor("what her newest prompt held: the retained recipe",
		textOf(`#user-builds tr[data-session="`+kitchen+`"] td:nth-child(2)`)+`.startsWith("THINK at turn 4 · ") && `+
			textOf(`#user-builds tr[data-session="`+kitchen+`"] td[data-tier="retained"]`)+` === "recipe_1" && `+
			`document.querySelectorAll("#user-builds tbody tr").length === 1`)

	// Follow the allergy through her sessions' THINK builds.
	b.run("type the fact", chromedp.SetValue("#user-fact-text", "peanut allergy", chromedp.ByQuery))
	b.click("follow it", "#user-fact-go")
	b.waitFor("where her prompts held it and lost it",
		textOf(`#user-fact-sessions li[data-session="`+kitchen+`"] .held-where`)+` === "held at turns 1–3 · lost at turn 4" && `+
			`document.querySelectorAll("#user-fact-sessions li").length === 1`)
	b.run("scroll to the top", chromedp.Evaluate(`window.scrollTo(0, 0)`, nil))
	b.screenshot("dashboard-user.png", true)
	b.requireAccessible("the user's page")
	b.click("open that session with the fact", `#user-fact-sessions li[data-session="`+kitchen+`"] a`)
	b.waitFor("the session, with the fact followed", `location.hash.startsWith("#/sessions/`+kitchen+`?") && `+
		textOf("#fact-where")+` === "THINK: held at turns 1–3 · lost at turn 4."`)

	// From the list: a row's user opens the same page.
	b.run("back to the list", navigate("#/"))
	b.click("ana's user on her kitchen row", `#sessions tr[data-key="ana-kitchen"] td:nth-child(3) a`)
	b.waitFor("her page again, in acme", `location.hash === "#/users/ana?tenant=acme" && `+rows("#user-sessions")+` === "ana-support,ana-kitchen"`)

	// By address, without a tenant: every tenant the admin sees.
	b.run("open her page by address", navigate("#/users/ana"))
	b.waitFor("her sessions in every tenant", textOf("#user-scope")+` === "Every tenant this key sees" && `+
		rows("#user-sessions")+` === "ana-globex,ana-support,ana-kitchen" && `+textOf("#user-turn-count")+` === "7"`)
	require.Empty(t, b.pageErrors(), "the page logged no error")

	// A READER of acme sees acme's only, by the same address.
	reader := createKey(t, s, "READER", "acme")
	b.click("sign out", "#sign-out")
	b.signIn(s.URL, reader)
	b.waitFor("signed in as a reader", textOf("#viewer-role")+` === "READER"`)
	b.run("open her page by address", navigate("#/users/ana"))
	b.waitFor("acme's sessions only", rows("#user-sessions")+` === "ana-support,ana-kitchen" && `+textOf("#user-session-count")+` === "2 · 2 active"`)
	b.run("ask for globex", navigate("#/users/ana?tenant=globex"))
	b.waitFor("none of globex's", textOf("#user-sessions")+` === "No session this key sees has user ana in tenant globex." && `+
		textOf("#user-session-count")+` === "0 · 0 active" && `+textOf("#user-cost")+` === "no model call recorded"`)
	b.requireAccessible("a user's page with no session")

	// On a phone: status and turns beside the key, nothing wider than the screen.
	b.run("a phone's viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile), navigate("#/users/ana?tenant=acme"))
	b.waitFor("her sessions", rows("#user-sessions")+` === "ana-support,ana-kitchen"`)
	b.waitFor("what her prompts held", `document.querySelectorAll("#user-builds tbody tr").length === 1`)
	var fit map[string]bool
	b.run("measure", chromedp.Evaluate(`(() => {
		const onScreen = (sel) => [...document.querySelectorAll(sel)].every(e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.left >= 0 && r.right <= 390; });
		return {
			status: onScreen("#user-sessions tbody td:nth-child(3)"),
			turns: onScreen("#user-sessions tbody td:nth-child(4)"),
			page: document.documentElement.scrollWidth <= 390,
		}; })()`, &fit))
	require.Equal(t, map[string]bool{"status": true, "turns": true, "page": true}, fit, "Status and Turns on screen, the page not scrolling sideways")
	b.requireAccessible("the user's page on a phone")
	if os.Getenv("SCREENSHOTS") == "1" {
		var shot []byte
		b.run("screenshot", chromedp.FullScreenshot(&shot, 100))
		require.NoError(t, os.WriteFile("/tmp/user-phone.png", shot, 0o644))
	}
	require.Empty(t, b.pageErrors(), "the page logged no error")
}
