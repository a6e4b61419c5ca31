package dashboard_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// The turns of the fifty-turn trace session that stand out.
const (
	failedTurn    = 7  // THINK's first call failed (a 503), its retry did not
	slowTurn      = 23 // THINK's call took 12 s
	expensiveTurn = 41 // REPLY's call cost $1.75
)

// seedFiftyTurnTrace scripts a session of 50 turns as an agent runtime
// records them: each turn calls a tool (its call and output recorded as
// items), reads the recipe it found, records THINK's build and the model
// call it fed, every third turn an ACT build too, then REPLY's build and
// call, and ends. So the session holds 116 builds, more than the page loads
// (100), and turn 1's and 2's are older than those. A calm session beside it
// has none of its failed, slow or expensive turns.
func seedFiftyTurnTrace(t *testing.T, s *apitest.Server) *agent {
	t.Helper()
	r := &agent{t: t, s: s, id: openSession(t, s, map[string]any{"tenant": "acme", "externalKey": "fifty-trace"})}
	for n := 1; n <= 50; n++ {
		r.begin(fmt.Sprintf("Question %d: what can I cook with lentils?", n))
		r.items(fmt.Sprintf(`{"type":"function_call","call_id":"call_%d","name":"find_recipe","arguments":"{\"q\":\"lentils %d\"}"}`, n, n),
			fmt.Sprintf(`{"type":"function_call_output","call_id":"call_%d","output":"Recipe %d: dal"}`, n, n))
		r.read("recipes", map[string]any{"id": uuid.NewString(), "name": fmt.Sprintf("Recipe %d", n)})
		r.recordContext("THINK")
		switch n {
		case failedTurn:
			r.modelCall("THINK", "gpt-4o", 2000, 0.001, "503 upstream overloaded")
			r.modelCall("THINK", "gpt-4o", 700, 0.004, "")
		case slowTurn:
			r.modelCall("THINK", "gpt-4o", 12000, 0.004, "")
		default:
			r.modelCall("THINK", "gpt-4o", 600, 0.004, "")
		}
		if n%3 == 0 {
			r.recordContext("ACT")
		}
		r.recordContext("REPLY")
		if n == expensiveTurn {
			r.modelCall("REPLY", "gpt-4.1", 900, 1.75, "")
		} else {
			r.modelCall("REPLY", "gpt-4o-mini", 300, 0.001, "")
		}
		r.end(fmt.Sprintf("Answer %d: a dal (recipe_%d).", n, n), nil)
	}
	calm := &agent{t: t, s: s, id: openSession(t, s, map[string]any{"tenant": "acme", "externalKey": "calm-chat"})}
	calm.begin("Hello")
	calm.recordContext("THINK")
	calm.modelCall("THINK", "gpt-4o", 200, 0.001, "")
	calm.end("Hi.", nil)
	return r
}

// build is a recorded build as the API reads it.
type build struct {
	ID         string `json:"id"`
	Turn       int    `json:"turn"`
	Node       string `json:"node"`
	TokenCount int    `json:"tokenCount"`
	Budget     int    `json:"budget"`
}

// buildsOf reads a session's builds of a turn, in the order recorded.
func buildsOf(t *testing.T, s *apitest.Server, id string, turns ...int) []build {
	t.Helper()
	var out struct {
		Session struct {
			ContextReceipts struct {
				Edges []struct{ Node build }
			}
		}
	}
	s.MustDo(t, `query($id: ID!, $turns: [Int!]) { session(id: $id) { contextReceipts(first: 100, where: {turnIn: $turns}, orderBy: [{field: TURN}, {field: CREATED_AT}]) {
		edges { node { id turn node tokenCount budget } } } } }`, map[string]any{"id": id, "turns": turns}, &out)
	var bs []build
	for _, e := range out.Session.ContextReceipts.Edges {
		bs = append(bs, e.Node)
	}
	return bs
}

// builtBy finds the build of a node among bs.
func builtBy(t *testing.T, bs []build, turn int, node string) build {
	t.Helper()
	for _, b := range bs {
		if b.Turn == turn && b.Node == node {
			return b
		}
	}
	t.Fatalf("no %s build at turn %d in %v", node, turn, bs)
	return build{}
}

// The trace of a 50-turn session, as an admin reads it: the list's
// failed, slow and expensive filters each find the session; its failed
// turn opens to the tool call and its output, each build's tokens against
// its budget as a bar and in words, the model calls with the failed one
// marked, and the turn's events in order; a build's link opens its prompt
// in "What the model saw", whose link leads back to the build in the
// trace, and a build's diff opens from there too; the events of a turn
// recorded meanwhile join its open trace live; each address (a turn older
// than the page, a build older than the loaded builds, a diff of two such)
// opens in a fresh page; and on a phone it fits, with axe clean throughout.
func TestDashboardTraceOfAFiftyTurnSession(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	r := seedFiftyTurnTrace(t, s)
	turn7 := buildsOf(t, s, r.id, failedTurn, failedTurn-1)
	think7, reply7, reply6 := builtBy(t, turn7, failedTurn, "THINK"), builtBy(t, turn7, failedTurn, "REPLY"), builtBy(t, turn7, failedTurn-1, "REPLY")
	early := buildsOf(t, s, r.id, 1, 2)
	think1, think2 := builtBy(t, early, 1, "THINK"), builtBy(t, early, 2, "THINK")

	b := newBrowser(t)
	b.signIn(s.URL, s.AdminKey)
	b.waitFor("both sessions", shownKeys+` === "calm-chat,fifty-trace"`)

	// The list finds it as failed, as slow and as expensive.
	for _, c := range []struct {
		what    string
		set     chromedp.Action
		address string
	}{
		{"with a failed turn", setSelect("#filter-failed", "yes"), "failed=yes"},
		{"with a turn slower than 10 s", chromedp.SetValue("#filter-slower", "10000", chromedp.ByQuery), "slowerMs=10000"},
		{"costing over $1", chromedp.SetValue("#filter-cost", "1", chromedp.ByQuery), "costAbove=1"},
	} {
		b.click("clear the filters", "#clear-filters")
		b.waitFor("both sessions again", shownKeys+` === "calm-chat,fifty-trace"`)
		b.run("filter "+c.what, c.set)
		b.click("search", "#search")
		b.waitFor("only the fifty-turn session "+c.what, shownKeys+fmt.Sprintf(` === "fifty-trace" && location.hash.includes(%q)`, c.address))
	}
	b.click("open it", `#sessions tr[data-key="fifty-trace"] td a`)
	b.waitFor("its 50 turns, each with its totals", `document.querySelectorAll("#turns .turn").length === 50 && `+
		textOf("#turn-7 .trace-totals")+` === "4 items · 3 model calls, 1 failed · 3 s · $0.006" && `+
		`/2 model calls · 12\.3 s/.test(`+textOf("#turn-23 .trace-totals")+`) && /\$1\.75/.test(`+textOf("#turn-41 .trace-totals")+`)`)
	b.waitFor("live updates", `document.querySelector("#live").dataset.state === "live"`)

	// The failed turn's trace.
	b.click("open turn 7's trace", "#turn-7 details.trace summary")
	b.waitFor("the tool call, its output and the messages, in order",
		`(() => { const items = [...document.querySelectorAll("#turn-7 .items > li")];
			return items.map(e => e.dataset.kind).join() === "MESSAGE,FUNCTION_CALL,FUNCTION_CALL_OUTPUT,MESSAGE" &&
				items[1].querySelector("code").textContent === "find_recipe" && items[1].querySelector("pre").textContent === '{"q":"lentils 7"}' &&
				/output of find_recipe · call_7/.test(items[2].textContent) && items[2].querySelector("pre").textContent === "Recipe 7: dal"; })()`)
	b.waitFor("THINK's two calls, the failed one marked, and REPLY's",
		`(() => { const rows = [...document.querySelectorAll("#turn-7 table.calls tbody tr")];
			return rows.map(r => r.dataset.receipt).join() === `+fmt.Sprintf("%q", strings.Join([]string{think7.ID, think7.ID, reply7.ID}, ","))+` &&
				rows[0].classList.contains("call-failed") && rows[0].querySelector(".badge-failed") !== null && /503 upstream overloaded/.test(rows[0].cells[6].textContent) &&
				!rows[1].classList.contains("call-failed") && rows[1].cells[6].textContent === "stop" &&
				rows[2].cells[2].textContent === "gpt-4o-mini"; })()`)
	for _, bd := range []build{think7, reply7} {
		scale := max(bd.TokenCount, bd.Budget)
		b.waitFor(bd.Node+"'s tokens against its budget, as a bar and in words", fmt.Sprintf(`(() => {
			const cell = document.querySelector('#turn-7 tr[data-receipt=%q] td.budget'), bar = cell.querySelector(".bar");
			const fill = bar.firstChild.getBoundingClientRect().width / bar.getBoundingClientRect().width;
			const mark = bar.querySelector(".budget-marker");
			return cell.querySelector(".budget-text").textContent === %q && bar.getAttribute("aria-hidden") === "true" &&
				Math.abs(fill - %f) < 0.02 && mark !== null && Math.abs(parseFloat(mark.style.left) - %f) < 0.2; })()`,
			bd.ID, fmt.Sprintf("%s / %s · %d%%", thousands(bd.TokenCount), thousands(bd.Budget), (bd.TokenCount*100+bd.Budget/2)/bd.Budget),
			max(float64(bd.TokenCount)/float64(scale), 0), float64(bd.Budget)*100/float64(scale)))
	}
	turn7Events := `turn.began,turn.items_recorded,refs.read,context.recorded,model.call_recorded,model.call_recorded,context.recorded,model.call_recorded,turn.ended`
	b.waitFor("the turn's events, oldest first", `[...document.querySelectorAll("#turn-7 .trace-events tbody tr")].map(r => r.dataset.kind).join() === `+fmt.Sprintf("%q", turn7Events)+` && `+
		`(() => { const seq = [...document.querySelectorAll("#turn-7 .trace-events tbody tr")].map(r => Number(r.dataset.sequence)); return seq.every((s, i) => i === 0 || s === seq[i - 1] + 1); })()`)
	b.requireAccessible("a failed turn's trace")

	// To what the model saw, and back.
	b.click("THINK's prompt", fmt.Sprintf(`#turn-7 tr[data-receipt=%q] a.build-prompt`, think7.ID))
	b.waitFor("THINK's turn 7 build in What the model saw, its prompt open and read", fmt.Sprintf(`(() => {
		const row = document.querySelector('#receipt-chart .receipt.linked[data-receipt=%q]');
		return row !== null && document.querySelector("#receipt-node").value === "THINK" && row.querySelector("details[open]") !== null &&
			/Question 7: what can I cook with lentils/.test(row.querySelector("pre").textContent) && location.hash.endsWith(%q); })()`, think7.ID, "?build="+think7.ID))
	b.click("back to its turn's trace", fmt.Sprintf(`#receipt-chart .receipt[data-receipt=%q] a.receipt-trace`, think7.ID))
	b.waitFor("turn 7's trace, the build marked", fmt.Sprintf(`document.querySelector('#turn-7.linked details.trace[open] tr.linked[data-receipt=%q]') !== null && location.hash.endsWith("?turn=7")`, think7.ID))
	b.click("REPLY's diff", fmt.Sprintf(`#turn-7 tr[data-receipt=%q] button.build-diff`, reply7.ID))
	b.waitFor("the diff from turn 6's REPLY build, named in the address", fmt.Sprintf(`new URLSearchParams(location.hash.split("?")[1]).get("diff") === %q && `+
		`document.querySelector("#receipt-node").value === "REPLY" && `+
		`[...document.querySelectorAll("#receipt-diff-tiers [data-entered]")].map(e => e.dataset.entered).includes("recipe_7")`, reply6.ID+","+reply7.ID))
	b.requireAccessible("a build's prompt and diff in What the model saw")

	// A turn recorded meanwhile: its events join its open trace as they come,
	// each by its turn (refs.read's payload names none: it is the session's
	// current turn's); turn 7's stay.
	r.begin("Question 51: and a dessert?")
	b.waitFor("turn 51 shown live", `document.querySelector("#turn-51 .trace-totals") !== null`)
	b.click("open turn 51's trace", "#turn-51 details.trace summary")
	b.waitFor("its first event", `[...document.querySelectorAll("#turn-51 .trace-events tbody tr")].map(r => r.dataset.kind).join() === "turn.began"`)
	b.click("unfold its payload", `#turn-51 .trace-events tr[data-kind="turn.began"] details summary`)
	b.waitFor("the payload's tree", `document.querySelector('#turn-51 .trace-events tr[data-kind="turn.began"] details[open] .json-view') !== null`)
	r.read("recipes", map[string]any{"id": uuid.NewString(), "name": "Kheer"})
	b.waitFor("the read joins it, the payload still unfolded", `[...document.querySelectorAll("#turn-51 .trace-events tbody tr")].map(r => r.dataset.kind).join() === "turn.began,refs.read" && `+
		`document.querySelector('#turn-51 .trace-events tr[data-kind="turn.began"] details[open] .json-view') !== null`)
	r.recordContext("THINK")
	r.modelCall("THINK", "gpt-4o", 500, 0.002, "")
	r.end("Kheer.", nil)
	b.waitFor("the build, its call and the end join it", `[...document.querySelectorAll("#turn-51 .trace-events tbody tr")].map(r => r.dataset.kind).join() === `+
		`"turn.began,refs.read,context.recorded,model.call_recorded,turn.ended" && document.querySelectorAll("#turn-51 table.calls tbody tr").length === 1`)
	r.do(`mutation($id: ID!) { retainRef(input: {sessionID: $id, ref: "recipe_51", reason: "dessert"}) { ref { ref } } }`, nil)
	b.waitFor("an event after the turn's end in the log", `document.querySelector("#events tbody tr")?.dataset.kind === "ref.retained"`)
	b.waitFor("and in the trace of the turn it came in, 51 until the next begins, only", `[...document.querySelectorAll("#turn-51 .trace-events tbody tr")].map(r => r.dataset.kind).join() === `+
		`"turn.began,refs.read,context.recorded,model.call_recorded,turn.ended,ref.retained" && `+
		`[...document.querySelectorAll("#turn-7 .trace-events tbody tr")].map(r => r.dataset.kind).join() === `+fmt.Sprintf("%q", turn7Events))

	// Each address, in a page loaded afresh.
	for _, c := range []struct{ what, query, shown string }{
		{"turn 1, older than the turns shown", "?turn=1", `document.querySelector("#turn-1.linked details.trace[open]") !== null && ` +
			`document.querySelectorAll("#turn-1 table.calls tbody tr").length === 2 && document.querySelectorAll("#turn-1 .trace-events tbody tr").length > 0`},
		{"turn 2's THINK build, older than the builds loaded", "?build=" + think2.ID, fmt.Sprintf(`(() => {
			const row = document.querySelector('#receipt-chart .receipt.linked[data-receipt=%q]');
			return row !== null && row.querySelector("details[open]") !== null && /Question 2: what can I cook/.test(row.querySelector("pre").textContent); })()`, think2.ID)},
		{"the diff of turn 1's and turn 2's THINK builds", "?diff=" + think1.ID + "," + think2.ID,
			`[...document.querySelectorAll("#receipt-diff-tiers [data-entered]")].map(e => e.dataset.entered).includes("recipe_2") && ` +
				fmt.Sprintf(`document.querySelector("#receipt-from").value === %q && document.querySelector("#receipt-to").value === %q`, think1.ID, think2.ID)},
		// Addresses that name nothing of this session say so, where the build or diff would show.
		{"a build of no session", "?build=" + uuid.NewString(), textOf("#receipt-diff [role=alert]") + ` === "No build of this session has this id."`},
		{"a build that is no id", "?build=recipe_1", `/^Could not read the build: .*\(INVALID_ID\)$/.test(` + textOf("#receipt-diff [role=alert] p") + `)`},
		{"a diff of two nodes' builds", "?diff=" + think1.ID + "," + reply7.ID,
			textOf("#receipt-diff [role=alert]") + ` === "The linked diff does not name two builds of one node of this session."`},
	} {
		b.run("open the address of "+c.what, chromedp.Navigate("about:blank"), chromedp.Navigate(s.URL+"/#/sessions/"+r.id+c.query))
		b.waitFor(c.what+", shown", c.shown)
	}

	// On a phone, with turn 7's trace open.
	b.run("a phone's viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	b.run("open turn 7", chromedp.Navigate("about:blank"), chromedp.Navigate(s.URL+"/#/sessions/"+r.id+"?turn=7"))
	b.waitFor("turn 7's trace, read", `document.querySelectorAll("#turn-7 table.calls tbody tr").length === 3 && document.querySelectorAll("#turn-7 .trace-events tbody tr").length === 9`)
	var fit struct {
		ScrollWidth, Width int
		Bars               []float64
	}
	b.run("measure", chromedp.Evaluate(`({ scrollWidth: document.documentElement.scrollWidth, width: window.innerWidth,
		bars: [...document.querySelectorAll("#turn-7 td.budget .bar")].map(e => e.getBoundingClientRect().width) })`, &fit))
	require.Equal(t, 390, fit.Width)
	require.LessOrEqual(t, fit.ScrollWidth, 390, "the page does not scroll sideways")
	require.Len(t, fit.Bars, 2)
	for _, w := range fit.Bars {
		require.Greater(t, w, 100.0, "a build's bar is drawn")
	}
	b.requireAccessible("a turn's trace on a phone")
	b.run("the system's dark setting", emulateScheme("dark"))
	b.requireAccessible("a turn's trace on a phone, dark")
	require.Empty(t, b.pageErrors(), "the page logged no error")
}

// thousands writes n as the page does: 12,345.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
