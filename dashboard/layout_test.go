package dashboard_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// At a phone's 390 px the header wraps with Sign out on screen, and the
// page does not scroll sideways: the table scrolls inside its card.
func TestListFitsAPhone(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	seedKitchen(t, s)
	b := newBrowser(t)
	b.run("a phone's viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	b.signIn(s.URL, s.AdminKey)
	b.waitFor("the sessions list", `document.querySelectorAll("#sessions tbody tr").length === 7`)
	b.waitFor("live updates", `document.querySelector("#live").dataset.state === "live"`)

	var fit struct {
		Left, Right, Top, Bottom float64
		ScrollWidth, Width       int
		TableScrolls             bool
	}
	b.run("measure", chromedp.Evaluate(`(() => {
		const r = document.querySelector("#sign-out").getBoundingClientRect();
		const wrap = document.querySelector("#sessions");
		return { left: r.left, right: r.right, top: r.top, bottom: r.bottom,
			scrollWidth: document.documentElement.scrollWidth, width: window.innerWidth,
			tableScrolls: wrap.scrollWidth > wrap.clientWidth };
	})()`, &fit))
	if os.Getenv("SCREENSHOTS") == "1" {
		var shot []byte
		b.run("screenshot", chromedp.FullScreenshot(&shot, 100))
		require.NoError(t, os.WriteFile("/tmp/phone.png", shot, 0o644))
	}
	require.Equal(t, 390, fit.Width)
	require.GreaterOrEqual(t, fit.Left, 0.0, "Sign out starts on screen")
	require.LessOrEqual(t, fit.Right, 390.0, "Sign out ends on screen")
	require.Greater(t, fit.Bottom, fit.Top, "Sign out is shown")
	require.LessOrEqual(t, fit.ScrollWidth, 390, "the page does not scroll sideways")
	require.True(t, fit.TableScrolls, "the table scrolls inside its card instead")
	b.requireAccessible("the sessions list on a phone")
	require.Empty(t, b.pageErrors(), "the page logged no error")
}

// emulateScheme makes the page see the system's light or dark setting.
func emulateScheme(scheme string) chromedp.Action {
	return emulation.SetEmulatedMedia().WithFeatures([]*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}})
}

// contrastOf is the expression for the contrast ratio (WCAG) of the text
// colour of the element sel against the background it is drawn on (its
// own, or its nearest ancestor's that is not transparent), and that
// background's relative luminance.
func contrastOf(sel string) string {
	return `((sel) => {
		const rgb = (c) => c.match(/[\d.]+/g).map(Number);
		const lum = ([r, g, b]) => [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
			.reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
		const el = document.querySelector(sel);
		let bg = el;
		while (bg && (getComputedStyle(bg).backgroundColor === "rgba(0, 0, 0, 0)" || getComputedStyle(bg).backgroundColor === "transparent")) bg = bg.parentElement;
		const back = lum(rgb(bg ? getComputedStyle(bg).backgroundColor : "rgb(255, 255, 255)"));
		const fore = lum(rgb(getComputedStyle(el).color));
		const [hi, lo] = fore > back ? [fore, back] : [back, fore];
		return { contrast: (hi + 0.05) / (lo + 0.05), background: back };
	})(` + "`" + sel + "`" + `)`
}

// The page follows the system's light or dark setting, and its text stays
// readable (WCAG AA, 4.5:1) on either.
func TestThemesFollowTheSystem(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	seedKitchen(t, s)
	for _, scheme := range []string{"light", "dark"} {
		t.Run(scheme, func(t *testing.T) {
			b := newBrowser(t)
			b.run("the system's setting", emulateScheme(scheme))
			b.signIn(s.URL, s.AdminKey)
			b.waitFor("the sessions list", `document.querySelectorAll("#sessions tbody tr").length === 7`)
			type look struct{ Contrast, Background float64 }
			for _, sel := range []string{"body", "#list-summary", "#sessions tbody td:nth-child(2)", "#sessions th", "label", "#filter-tenant", "#clear-filters", "#feed-state", "#viewer"} {
				var l look
				b.run("measure "+sel, chromedp.Evaluate(contrastOf(sel), &l))
				require.GreaterOrEqual(t, l.Contrast, 4.5, "%s: text contrast in %s mode", sel, scheme)
				if sel == "body" {
					if scheme == "dark" {
						require.Less(t, l.Background, 0.05, "a dark background in dark mode")
					} else {
						require.Greater(t, l.Background, 0.8, "a light background in light mode")
					}
				}
			}
			b.requireAccessible("the sessions list in " + scheme + " mode")
			if os.Getenv("SCREENSHOTS") == "1" {
				var shot []byte
				b.run("screenshot", chromedp.CaptureScreenshot(&shot))
				require.NoError(t, os.WriteFile("/tmp/theme-"+scheme+".png", shot, 0o644))
			}
			require.Empty(t, b.pageErrors(), "the page logged no error")
		})
	}
}

// The page has an icon: the one it links and /favicon.ico, which browsers
// and tools ask for whatever the page links, answer with the same SVG.
func TestDashboardHasAnIcon(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	b := newBrowser(t)
	b.signIn(s.URL, s.AdminKey)
	b.waitFor("the sessions list", `document.querySelector("#sessions") !== null`)
	var got string
	b.run("fetch the icons", chromedp.Evaluate(`(async () => {
		const link = document.querySelector('link[rel="icon"]');
		if (!link) return "no icon linked";
		const answers = await Promise.all([link.href, "/favicon.ico"].map(async (u) => {
			const r = await fetch(u);
			return r.status + " " + r.headers.get("content-type") + " " + (await r.text()).startsWith("<svg");
		}));
		return answers.join(" | ");
	})()`, &got, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	require.Equal(t, "200 image/svg+xml true | 200 image/svg+xml true", got)
	require.Empty(t, b.pageErrors(), "the page logged no error")
}

// On a phone the sessions list shows each row's status and turn count
// without scrolling the table sideways, and the diff of two builds fits the
// screen: its sections table (a name such as pending_clarification does not
// wrap) scrolls inside its own box.
func TestPhoneShowsStatusTurnsAndTheDiff(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	seedKitchen(t, s)
	r := &agent{t: t, s: s, id: openSession(t, s, map[string]any{"tenant": "acme", "externalKey": "clarify"})}
	r.begin("Plan dinner for the whole week, with a shopping list")
	r.read("recipes", map[string]any{"id": uuid.NewString(), "name": "Dal Tadka"})
	r.do(`mutation($id: ID!) { updateSession(input: {id: $id, engagementSummary: "Weeknight cooking from the pantry for a family of four.",
		pendingClarification: {question: "Which nights do you cook, and for how many people?"}}) { session { id } } }`, nil)
	r.recordContext("UNDERSTAND")
	r.end("Which nights do you cook?", nil)
	r.begin("Monday to Friday, for four")
	r.do(`mutation($id: ID!) { updateSession(input: {id: $id, clearPendingClarification: true}) { session { id } } }`, nil)
	r.recordContext("UNDERSTAND")

	b := newBrowser(t)
	b.run("a phone's viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	b.signIn(s.URL, s.AdminKey)
	b.waitFor("the sessions list", `document.querySelectorAll("#sessions tbody tr").length === 8`)
	onScreen := func(sel string) string {
		return fmt.Sprintf(`[...document.querySelectorAll(%q)].every(e => { const r = e.getBoundingClientRect(); return r.width > 0 && r.left >= 0 && r.right <= 390; })`, sel)
	}
	var shown map[string]bool
	b.run("measure the list", chromedp.Evaluate(`({
		status: `+onScreen(`#sessions tbody td:nth-child(5), #sessions thead th:nth-child(5)`)+`,
		turns: `+onScreen(`#sessions tbody td:nth-child(6), #sessions thead th:nth-child(6)`)+`,
		page: document.documentElement.scrollWidth <= 390,
	})`, &shown))
	require.Equal(t, map[string]bool{"status": true, "turns": true, "page": true}, shown, "Status and Turns on screen, the page not scrolling sideways")

	b.click("open the session", `#sessions tr[data-key="clarify"] a`)
	b.waitFor("two UNDERSTAND builds", `document.querySelectorAll("#receipt-chart .receipt").length === 2`)
	b.click("compare", "#receipt-compare")
	b.waitFor("the diff's sections", `document.querySelector('#receipt-diff-sections tr[data-section="pending_clarification"]') !== null`)
	var wide []string
	b.run("measure the diff", chromedp.Evaluate(`(() => {
		const edge = document.querySelector("#receipt-diff").getBoundingClientRect().right + 0.5;
		return [...document.querySelectorAll("#receipt-diff *")]
		.filter(e => e.getBoundingClientRect().right > edge && !e.parentElement.closest(".scroll-box"))
		.map(e => e.tagName + "#" + e.id + "." + e.className); })()`, &wide))
	require.Empty(t, wide, "nothing of the diff reaches past its card but inside a scroll box")
	b.requireAccessible("a session with a diff on a phone")
	var pageWidth int
	b.run("the page's width", chromedp.Evaluate(`document.documentElement.scrollWidth`, &pageWidth))
	require.LessOrEqual(t, pageWidth, 390, "the page does not scroll sideways")
	require.Empty(t, b.pageErrors(), "the page logged no error")
}
