package dashboard_test

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// browser is one headless Chromium tab on the dashboard.
type browser struct {
	t   testing.TB
	ctx context.Context

	mu     sync.Mutex
	errors []string // uncaught exceptions and console errors of the page
}

func newBrowser(t testing.TB) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(apitest.Chromium(t)),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.WindowSize(1280, 800),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	// chromedp reports CDP events newer than itself (such as the top layer
	// of a modal <dialog>) as errors; they are not the page's.
	var closed atomic.Bool
	logf := func(format string, args ...any) {
		if msg := fmt.Sprintf(format, args...); !closed.Load() && !strings.Contains(msg, "unhandled node event") {
			t.Log("chromedp: " + msg)
		}
	}
	ctx, cancelTab := chromedp.NewContext(actx, chromedp.WithErrorf(logf))
	// A generous deadline for the whole test: on a loaded machine (make test
	// on 2 busy cores) Chromium and the server can be slow by tens of seconds.
	ctx, cancelTime := context.WithTimeout(ctx, browserDeadline)
	t.Cleanup(func() { cancelTime(); cancelTab(); cancelAlloc(); closed.Store(true) })
	b := &browser{t: t, ctx: ctx}
	chromedp.ListenTarget(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			b.record("uncaught: " + ev.ExceptionDetails.Error())
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				b.record("console.error: " + strings.Join(parts, " "))
			}
		}
	})
	require.NoError(t, chromedp.Run(ctx), "start Chromium")
	return b
}

func (b *browser) record(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.errors = append(b.errors, s)
}

// run runs actions and, on failure, says what the page showed.
func (b *browser) run(what string, actions ...chromedp.Action) {
	b.t.Helper()
	if err := chromedp.Run(b.ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v\npage text:\n%s\npage errors: %v", what, err, b.text(), b.pageErrors())
	}
}

func (b *browser) text() string {
	var s string
	ctx, cancel := context.WithTimeout(b.ctx, 2*time.Second)
	defer cancel()
	_ = chromedp.Run(ctx, chromedp.Evaluate(`document.body ? document.body.innerText : ""`, &s))
	return s
}

func (b *browser) pageErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errors...)
}

// Deadlines of the browser tests: generous, because they are for a page that
// never gets there, not a measure of speed; make test runs them on a loaded
// machine.
const (
	browserDeadline = 4 * time.Minute
	waitDeadline    = time.Minute
)

// waitFor waits until a JavaScript condition holds on the page.
func (b *browser) waitFor(what, condition string) {
	b.t.Helper()
	b.run("wait for "+what, chromedp.Poll(condition, nil, chromedp.WithPollingTimeout(waitDeadline)))
}

// waitWithin waits at most d for a JavaScript condition on the page: for
// what must happen before something else would make it happen (the list's
// poll, a minute away), not merely eventually.
func (b *browser) waitWithin(what, condition string, d time.Duration) {
	b.t.Helper()
	b.run("wait for "+what, chromedp.Poll(condition, nil, chromedp.WithPollingTimeout(d)))
}

// textOf is the expression for the trimmed text of the first element matching sel.
func textOf(sel string) string {
	return fmt.Sprintf(`(document.querySelector(%q)?.textContent || "").trim()`, sel)
}

// click clicks the first element matching sel once it is there and enabled.
// The click runs inside the page, so a live re-render between finding the
// element and clicking it cannot make it miss.
func (b *browser) click(what, sel string) {
	b.t.Helper()
	b.waitFor(what, fmt.Sprintf(`(() => { const el = document.querySelector(%q); if (!el || el.disabled) return false; el.click(); return true; })()`, sel))
}

func (b *browser) signIn(url, key string) {
	b.t.Helper()
	b.run("open the dashboard and sign in",
		chromedp.Navigate(url+"/"),
		chromedp.WaitVisible("#api-key", chromedp.ByQuery),
		chromedp.SendKeys("#api-key", key, chromedp.ByQuery),
		chromedp.Click("#sign-in", chromedp.ByQuery))
}

// signInToSession signs in and opens a session's page in place, as a
// click from the list does.
func (b *browser) signInToSession(url, key, id string) {
	b.t.Helper()
	b.signIn(url, key)
	b.waitFor("the sessions list", `document.querySelector("#sessions") !== null`)
	b.run("open the session", navigate("#/sessions/"+id))
}

func (b *browser) screenshot(name string, full bool) {
	b.t.Helper()
	var shot []byte
	action := chromedp.CaptureScreenshot(&shot)
	if full {
		action = chromedp.FullScreenshot(&shot, 100)
	}
	b.run("screenshot "+name, action)
	cfg, err := png.DecodeConfig(bytes.NewReader(shot))
	require.NoError(b.t, err, "a screenshot is a PNG")
	require.Equal(b.t, 1280, cfg.Width, "the laptop-sized window")
	if os.Getenv("SCREENSHOTS") == "1" {
		require.NoError(b.t, os.MkdirAll(filepath.Join("..", "docs"), 0o755))
		require.NoError(b.t, os.WriteFile(filepath.Join("..", "docs", name), shot, 0o644))
		b.t.Logf("wrote docs/%s", name)
	}
}

// An admin's whole visit: sign in, find a session
// by external key, open it, see its refs and a context tab, expire it, and
// see a session another client opens appear in the list without a reload.
func TestDashboard(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	id := seedKitchen(t, s)
	b := newBrowser(t)

	b.signIn(s.URL, s.AdminKey)
	b.waitFor("the sessions list", `document.querySelectorAll("#sessions tbody tr").length === 7`)
	b.waitFor("the signed-in role", textOf("#viewer-role")+` === "ADMIN"`)
	b.waitFor("live updates", `document.querySelector("#live").dataset.state === "live"`)
	b.waitFor("the total", textOf("#list-summary")+` === "1–7 of 7 sessions"`)
	b.screenshot("dashboard-list.png", false)
	b.requireAccessible("the sessions list")

	// Find it by external key.
	b.run("search by external key",
		chromedp.SendKeys("#filter-q", "chat-7", chromedp.ByQuery),
		chromedp.Click("#search", chromedp.ByQuery))
	b.waitFor("one match", `document.querySelectorAll("#sessions tbody tr").length === 1 && `+textOf("#list-summary")+` === "1–1 of 1 sessions"`)
	b.waitFor("the match is the kitchen session", textOf("#sessions tbody tr td a")+` === "kitchen-chat-7"`)

	// Open it: header, refs with their tiers, the artifact, a context tab.
	b.click("open the session", "#sessions tbody tr td a")
	b.waitFor("the session header", textOf("#session-status")+` === "ACTIVE" && `+textOf("#session-turn")+` === "4"`)
	b.waitFor("the session id", textOf("#session-id")+fmt.Sprintf(" === %q", id))
	b.waitFor("the refs", `document.querySelectorAll("#refs tbody tr").length === 7`)
	b.waitFor("inv_1 active", textOf(`#refs tr[data-ref="inv_1"] .tier`)+` === "active"`)
	// Its label never came, and the turn that queued it ended, and with it
	// the enrichment queue (docs/context-rules.md): no label, and none awaited.
	b.waitFor("recipe_3 linked, with no label", textOf(`#refs tr[data-ref="recipe_3"] .tag`)+` === "linked" && `+
		textOf(`#refs tr[data-ref="recipe_3"] td:nth-child(3)`)+` === "—"`)
	b.waitFor("recipe_1 retained with its reason",
		textOf(`#refs tr[data-ref="recipe_1"] .tier`)+` === "retained kept: user plans it for Friday"`)
	b.waitFor("gen_task_1 generated", textOf(`#refs tr[data-ref="gen_task_1"] .tier`)+` === "generated"`)
	b.waitFor("meal_plan_1's action tag", textOf(`#refs tr[data-ref="meal_plan_1"] .tag`)+` === "read"`)
	b.waitFor("the pending artifact", textOf(`#artifacts [data-ref="gen_task_1"] h3`)+` === "gen_task_1 Shopping list for the week PENDING"`)
	b.waitFor("the turn timeline", `document.querySelectorAll("#turns .turn").length === 4`)
	b.waitFor("the event log", `document.querySelectorAll("#events tbody tr").length > 10`)

	b.waitFor("the UNDERSTAND context", `document.querySelector('#context-panel .ctx-build[data-node="UNDERSTAND"]') !== null`)
	b.click("open the THINK tab", "#tab-THINK")
	b.waitFor("THINK's build with token bars", `document.querySelector('#context-panel .ctx-build[data-node="THINK"]') !== null && `+
		`document.querySelectorAll("#context-panel .ctx-section .bar").length > 0 && `+
		`/ of 8,000 tokens/.test(`+textOf("#context-panel .ctx-total")+`)`)
	b.run("scroll to the top", chromedp.Evaluate(`window.scrollTo(0, 0)`, nil))
	b.screenshot("dashboard-session.png", true)
	b.requireAccessible("a session")

	b.run("filter refs by type", chromedp.SetValue("#ref-type", "recipe", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("#ref-type").dispatchEvent(new Event("change"))`, nil))
	b.waitFor("only recipes", `[...document.querySelectorAll("#refs tbody tr")].map(r => r.dataset.ref).join() === "recipe_1,recipe_2,recipe_3"`)

	// Expire it: a confirmation first, then the header says EXPIRED.
	b.click("expire", "#expire-session")
	b.waitFor("the confirmation", `document.querySelector("dialog[open]") !== null && /Expire “kitchen-chat-7” now\?/.test(`+textOf("#dialog-body")+`)`)
	b.click("confirm", "#dialog-confirm")
	b.waitFor("the expired status", textOf("#session-status")+` === "EXPIRED" && document.querySelector("#expire-session").disabled`)
	var status struct {
		Session struct{ Status string } `json:"session"`
	}
	s.MustDo(t, `query($id: ID!) { session(id: $id) { status } }`, map[string]any{"id": id}, &status)
	require.Equal(t, "EXPIRED", status.Session.Status, "the dashboard's expiry reached the server")

	// Back to the list: a session another client opens appears by itself.
	b.click("back to the list", ".crumbs a")
	b.run("clear the search", chromedp.WaitVisible("#filter-q", chromedp.ByQuery), chromedp.Click("#clear-filters", chromedp.ByQuery))
	b.waitFor("the whole list", `document.querySelectorAll("#sessions tbody tr").length === 7`)
	b.waitFor("live updates", `document.querySelector("#live").dataset.state === "live"`)
	openSession(t, s, map[string]any{"tenant": "globex", "externalKey": "opened-elsewhere", "userID": "user-99"})
	b.waitFor("the change offered", textOf("#pending-changes")+` === "1 change — refresh"`)
	b.click("refresh", "#pending-changes")
	b.waitFor("the new session without a reload", `document.querySelector('#sessions tr[data-key="opened-elsewhere"]') !== null && `+
		textOf("#list-summary")+` === "1–8 of 8 sessions" && document.querySelector("#pending-changes").hidden`)
	var loads int
	b.run("count page loads", chromedp.Evaluate(`performance.getEntriesByType("navigation").length`, &loads))
	require.Equal(t, 1, loads, "the list updated in place: no reload")

	require.Empty(t, b.pageErrors(), "the page logged no error")
}

// A wrong key never gets past the sign-in form, and the admin reads why.
func TestDashboardRefusesAWrongKey(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	b := newBrowser(t)

	b.signIn(s.URL, "sg_not-a-real-key")
	b.waitFor("the refusal", `document.querySelector("#login-status [role=alert]") !== null`)
	var message string
	b.run("read the refusal", chromedp.Evaluate(textOf("#login-status [role=alert]"), &message))
	require.True(t, strings.HasPrefix(message, "The server did not accept this API key: "), message)
	require.True(t, strings.HasSuffix(message, "(UNAUTHENTICATED)"), message)

	var stored string
	b.run("read the stored key", chromedp.Evaluate(`sessionStorage.getItem("sessiongraph.apiKey") || ""`, &stored))
	require.Empty(t, stored, "a refused key is not kept")
	var onForm bool
	b.run("still on the form", chromedp.Evaluate(`document.querySelector("#api-key") !== null && document.querySelector("#sessions") === null`, &onForm))
	require.True(t, onForm)

	// The right key then works from the same form.
	b.run("retype the key", chromedp.Evaluate(`document.querySelector("#api-key").value = ""`, nil), chromedp.SendKeys("#api-key", s.AdminKey, chromedp.ByQuery),
		chromedp.Click("#sign-in", chromedp.ByQuery))
	b.waitFor("the sessions list", `document.querySelector("#sessions") !== null && `+textOf("#list-summary")+` === "No sessions match."`)
	require.Empty(t, b.pageErrors(), "the page logged no error")
}

// setSelect chooses an option the way a user would, change event included.
func setSelect(sel, value string) chromedp.Action {
	return chromedp.Evaluate(fmt.Sprintf(`(() => { const s = document.querySelector(%q); s.value = %q; s.dispatchEvent(new Event("change")); })()`, sel, value), nil)
}

func lastNotice() string {
	return `([...document.querySelectorAll("#notices .notice")].pop()?.firstChild?.textContent || "")`
}

// The admin's other actions: bulk expiry of a filtered list (the
// confirmation states the count), the idle filter, retain and release, a
// session that changes while it is open, delete with a confirmation, and a
// READER key's refused expiry shown in words.
func TestDashboardActions(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	id := seedKitchen(t, s)
	b := newBrowser(t)
	b.signIn(s.URL, s.AdminKey)
	b.waitFor("the sessions list", `document.querySelectorAll("#sessions tbody tr").length === 7`)

	// Bulk expiry of one tenant's sessions.
	b.run("filter by tenant", chromedp.SendKeys("#filter-tenant", "globex", chromedp.ByQuery), chromedp.Click("#search", chromedp.ByQuery))
	b.waitFor("globex only", textOf("#list-summary")+` === "1–2 of 2 sessions"`)
	b.click("bulk expire", "#bulk-expire")
	b.waitFor("the confirmation with the count", textOf("#dialog-body")+` === "Expire 2 active sessions of all tenants where the tenant's name contains “globex”? They stay readable until purged; their keys open fresh sessions."`)
	b.click("confirm", "#dialog-confirm")
	b.waitFor("the outcome", lastNotice()+` === "Expired 2 sessions."`)
	b.waitFor("both rows expired", `[...document.querySelectorAll("#sessions tbody tr .badge")].map(e => e.textContent).join() === "EXPIRED,EXPIRED"`)
	var counts struct {
		Expired struct{ TotalCount int } `json:"expired"`
		Active  struct{ TotalCount int } `json:"active"`
	}
	s.MustDo(t, `{ expired: sessions(where: {status: EXPIRED}) { totalCount } active: sessions(where: {status: ACTIVE}) { totalCount } }`, nil, &counts)
	require.Equal(t, 2, counts.Expired.TotalCount, "only the filtered sessions expired")
	require.Equal(t, 5, counts.Active.TotalCount)

	// Idle for over five minutes: nothing, everything here is fresh.
	b.run("filter by idle time", chromedp.Evaluate(`document.querySelector("#filter-tenant").value = ""`, nil),
		setSelect("#filter-idle", "300"), chromedp.Click("#search", chromedp.ByQuery))
	b.waitFor("no idle session", textOf("#list-summary")+` === "No sessions match." && `+textOf("#sessions")+` === "No session matches these filters."`)
	b.click("clear", "#clear-filters")
	b.waitFor("the whole list", textOf("#list-summary")+` === "1–7 of 7 sessions"`)

	// Release and retain refs.
	b.run("open the session", chromedp.Navigate(s.URL+"/#/sessions/"+id))
	b.waitFor("recipe_1 retained", textOf(`#refs tr[data-ref="recipe_1"] .tier`)+` === "retained kept: user plans it for Friday"`)
	b.click("release recipe_1", `#refs tr[data-ref="recipe_1"] button.act`)
	b.waitFor("recipe_1 released", textOf(`#refs tr[data-ref="recipe_1"] .tier`)+` === "out of context" && `+
		textOf(`#refs tr[data-ref="recipe_1"] button.act`)+` === "Retain…"`)
	b.click("retain recipe_2", `#refs tr[data-ref="recipe_2"] button.act`)
	b.run("give the reason", chromedp.WaitVisible("#dialog-reason", chromedp.ByQuery), chromedp.SendKeys("#dialog-reason", "user asked twice", chromedp.ByQuery),
		chromedp.Click("#dialog-confirm", chromedp.ByQuery))
	b.waitFor("recipe_2 retained", textOf(`#refs tr[data-ref="recipe_2"] .tier`)+` === "retained kept: user asked twice"`)
	var refs struct {
		Session struct {
			Refs struct {
				Edges []struct {
					Node struct {
						Ref          string  `json:"ref"`
						ActiveReason *string `json:"activeReason"`
					} `json:"node"`
				} `json:"edges"`
			} `json:"refs"`
		} `json:"session"`
	}
	s.MustDo(t, `query($id: ID!) { session(id: $id) { refs(where: {refIn: ["recipe_1", "recipe_2"]}, orderBy: [{field: REF}]) { edges { node { ref activeReason } } } } }`, map[string]any{"id": id}, &refs)
	require.Len(t, refs.Session.Refs.Edges, 2)
	require.Nil(t, refs.Session.Refs.Edges[0].Node.ActiveReason, "recipe_1 released")
	require.Equal(t, "user asked twice", *refs.Session.Refs.Edges[1].Node.ActiveReason)

	// The runtime keeps working while the admin looks: the view follows.
	(&agent{t: t, s: s, id: id}).read("recipes", map[string]any{"id": "0b5c3f7e-8d5a-4a57-9c39-0f3a3d1f2e11", "name": "Pad Thai"})
	b.waitFor("the new ref, live", textOf(`#refs tr[data-ref="recipe_4"] td:nth-child(3)`)+` === "Pad Thai" && `+
		textOf(`#refs tr[data-ref="recipe_4"] .tier`)+` === "active"`)
	b.waitFor("its event, live", textOf(`#events tbody tr:first-child`)+`.includes("refs.read")`)

	// Delete, after a confirmation that says what goes.
	b.click("delete", "#delete-session")
	b.waitFor("the confirmation", `/^Delete “kitchen-chat-7” with its 4 turns, 8 refs, 1 artifact and \d+ events\? This cannot be undone\.$/.test(`+textOf("#dialog-body")+`)`)
	b.click("confirm", "#dialog-confirm")
	b.waitFor("back on the list", `document.querySelector("#sessions") !== null && `+lastNotice()+` === "Session “kitchen-chat-7” was deleted."`)
	b.waitFor("six sessions left", textOf("#list-summary")+` === "1–6 of 6 sessions"`)
	gone := s.Do(t, `query($id: ID!) { session(id: $id) { id } }`, map[string]any{"id": id})
	require.Len(t, gone.Errors, 1, "deleted on the server: %s", gone.Data)
	require.Equal(t, "NOT_FOUND", gone.Errors[0].Code())
	b.run("open the deleted session", chromedp.Navigate(s.URL+"/#/sessions/"+id))
	b.waitFor("a clear message", textOf("main [role=alert]")+` === "No session has this id: it was deleted, purged, or belongs to another tenant. (NOT_FOUND)"`)

	// A READER may look but is offered no expiry (TestDashboardShowsActionsByRole has the rest).
	reader := s.NewKey(t, "READER", "acme")
	b.click("sign out", "#sign-out")
	b.signIn(s.URL, reader)
	b.waitFor("the reader's list: acme only", textOf("#viewer-role")+` === "READER" && `+textOf("#list-summary")+` === "1–3 of 3 sessions"`)
	b.click("open an acme session", "#sessions tbody tr td a")
	b.waitFor("its header, without Expire", textOf("#session-status")+` === "ACTIVE" && document.querySelector("#expire-session") === null`)
	require.Empty(t, b.pageErrors(), "the page logged no error")
}
