package dashboard_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// items appends items (each its JSON text) to the open turn, as a runtime does.
func (r *agent) items(items ...string) {
	r.t.Helper()
	r.do(`mutation($id: ID!, $items: [String!]!) { recordItems(input: {sessionID: $id, items: $items}) { turn { number } } }`,
		map[string]any{"items": items})
}

// modelCall reports the call to a model that the node's newest build of the
// current turn fed.
func (r *agent) modelCall(node, model string, latencyMs int, cost float64, failure string) {
	r.t.Helper()
	var finish, failed any = "stop", nil
	if failure != "" {
		finish, failed = nil, failure
	}
	r.do(`mutation($id: ID!, $node: ContextNode!, $model: String!, $latency: Int!, $cost: Float!, $finish: String, $error: String) {
		recordModelCall(input: {sessionID: $id, node: $node, model: $model, inputTokens: 1200, outputTokens: 80,
			latencyMs: $latency, cost: $cost, finishReason: $finish, error: $error}) { modelCall { id } } }`,
		map[string]any{"node": node, "model": model, "latency": latencyMs, "cost": cost, "finish": finish, "error": failed})
}

// seedTraces opens the session whose trace the test reads, three turns:
// a tool call and its output (turn 1), a failed call and its retry taking
// 5.5 s in all (turn 2), and a $0.50 answer (turn 3); and three others, a
// calm one, a slow one and an expensive one, for the list's filters.
func seedTraces(t *testing.T, s *apitest.Server) string {
	t.Helper()
	r := &agent{t: t, s: s, id: openSession(t, s, map[string]any{"tenant": "acme", "externalKey": "trace-chat"})}
	r.begin("What is the weather in Paris?")
	r.items(`{"type":"function_call","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"Paris\"}"}`,
		`{"type":"function_call_output","call_id":"call_1","output":"18°C and sunny"}`)
	r.recordContext("THINK")
	r.modelCall("THINK", "gpt-4o", 900, 0.0123, "")
	r.end("It is 18°C and sunny in Paris.", nil)

	r.begin("And tomorrow?")
	r.recordContext("THINK")
	r.modelCall("THINK", "gpt-4o", 4000, 0.002, "429 rate limited")
	r.modelCall("THINK", "gpt-4o", 1500, 0.01, "")
	r.end("Rain tomorrow.", nil)

	r.begin("Write me a long poem about it.")
	r.recordContext("REPLY")
	r.modelCall("REPLY", "gpt-4.1", 300, 0.5, "")
	r.end("A poem.", nil)

	for _, other := range []struct {
		key     string
		latency int
		cost    float64
	}{{"calm-chat", 200, 0.001}, {"slow-chat", 9000, 0.01}, {"pricey-chat", 100, 2}} {
		o := &agent{t: t, s: s, id: openSession(t, s, map[string]any{"tenant": "acme", "externalKey": other.key})}
		o.begin("Hello")
		o.recordContext("THINK")
		o.modelCall("THINK", "gpt-4o", other.latency, other.cost, "")
		o.end("Hi.", nil)
	}
	return r.id
}

// shownKeys is the expression for the external keys of the list's rows, sorted.
const shownKeys = `[...document.querySelectorAll("#sessions tbody tr")].map(tr => tr.dataset.key).sort().join()`

// An admin looks into a session turn by turn: each turn's totals, then a
// turn opened to its tool call and output and its build's model call, the
// failed call shown failed; a turn recorded meanwhile fills its open trace
// live, without a reload; a link to a turn opens its trace; and the list
// finds the failed, the slow and the expensive sessions.
func TestDashboardTurnTrace(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	id := seedTraces(t, s)
	r := &agent{t: t, s: s, id: id}

	b := newBrowser(t)
	b.signInToSession(s.URL, s.AdminKey, id)
	b.waitFor("the turns' totals, newest first",
		`[...document.querySelectorAll(".turn")].map(e => e.dataset.turn).join() === "3,2,1" && `+
			`/2 model calls, 1 failed · 5\.5 s · \$0\.012/.test(`+textOf("#turn-2 .trace-totals")+`) && `+
			`/1 model call · 300 ms · \$0\.5/.test(`+textOf("#turn-3 .trace-totals")+`) && `+
			`/^4 items/.test(`+textOf("#turn-1 .trace-totals")+`)`)
	// From here on, a reload of the whole session would be counted.
	b.run("count whole-session reads", chromedp.Evaluate(`(() => { window.sessionReads = 0; const f = window.fetch;
		window.fetch = (u, o) => { if (o && String(o.body).includes("query Session(")) window.sessionReads++; return f(u, o); }; return true; })()`, nil))

	b.click("open turn 1's trace", "#turn-1 details.trace summary")
	b.waitFor("the tool call with its arguments, its output, and the messages",
		`(() => { const items = [...document.querySelectorAll("#turn-1 .items > li")];
			return items.map(e => e.dataset.kind).join() === "MESSAGE,FUNCTION_CALL,FUNCTION_CALL_OUTPUT,MESSAGE" &&
				items[1].querySelector("code").textContent === "get_weather" && items[1].querySelector("pre").textContent === '{"city":"Paris"}' &&
				/output of get_weather · call_1/.test(items[2].textContent) && items[2].querySelector("pre").textContent === "18°C and sunny" &&
				/It is 18°C and sunny in Paris/.test(items[3].textContent); })()`)
	b.waitFor("its THINK build and the call it fed",
		`(() => { const rows = [...document.querySelectorAll("#turn-1 table.calls tbody tr")];
			return rows.length === 1 && rows[0].cells[0].querySelector("code").textContent === "THINK" && rows[0].cells[2].textContent === "gpt-4o" &&
				rows[0].cells[3].textContent === "1,200 / 80" && rows[0].cells[4].textContent === "900 ms" &&
				rows[0].cells[5].textContent === "$0.0123" && rows[0].cells[6].textContent === "stop"; })()`)

	b.click("open turn 2's trace", "#turn-2 details.trace summary")
	b.waitFor("the failed call shown failed, its retry not",
		`(() => { const rows = [...document.querySelectorAll("#turn-2 table.calls tbody tr")];
			return rows.length === 2 && rows[0].classList.contains("call-failed") && rows[0].querySelector(".badge-failed") !== null &&
				/429 rate limited/.test(rows[0].cells[6].textContent) && rows[0].cells[4].textContent === "4 s" &&
				!rows[1].classList.contains("call-failed") && rows[1].cells[4].textContent === "1.5 s"; })()`)
	b.requireAccessible("a session with two turns' traces open")

	// Live: a new turn, its trace opened, then filled by the runtime.
	r.begin("Book a table for tonight")
	b.waitFor("turn 4 shown live", `document.querySelector("#turn-4 .trace-totals")?.textContent === "1 item · no model call recorded"`)
	b.click("open turn 4's trace", "#turn-4 details.trace summary")
	b.waitFor("its user message and no build yet",
		`document.querySelectorAll("#turn-4 .items > li").length === 1 && /No build recorded/.test(`+textOf("#turn-4 .trace-body")+`)`)
	r.items(`{"type":"function_call","call_id":"call_9","name":"book_table","arguments":"{\"time\":\"20:00\"}"}`)
	b.waitFor("the tool call joins the open trace (turn.items_recorded)",
		`[...document.querySelectorAll("#turn-4 .items > li")].map(e => e.dataset.kind).join() === "MESSAGE,FUNCTION_CALL" && `+
			textOf("#turn-4 .trace-totals")+` === "2 items · no model call recorded"`)
	r.recordContext("THINK")
	r.modelCall("THINK", "gpt-4o-mini", 700, 0.25, "")
	b.waitFor("the build and its model call join it (context.recorded, model.call_recorded)",
		`document.querySelector("#turn-4 table.calls tbody tr")?.cells[2].textContent === "gpt-4o-mini" && `+
			textOf("#turn-4 .trace-totals")+` === "2 items · 1 model call · 700 ms · $0.25"`)
	var reads int
	b.run("whole-session reads", chromedp.Evaluate(`window.sessionReads`, &reads))
	require.Zero(t, reads, "the live events were applied in place, not by reading the whole session again")

	// A link to a turn opens the page there, with the turn's trace open.
	b.run("follow a link to turn 2, in a page loaded afresh", chromedp.Navigate("about:blank"), chromedp.Navigate(fmt.Sprintf("%s/#/sessions/%s?turn=2", s.URL, id)))
	b.waitFor("turn 2 linked, its trace open and read",
		`document.querySelector("#turn-2.linked details.trace[open]") !== null && `+
			`document.querySelectorAll("#turn-2 table.calls tbody tr").length === 2 && `+
			`document.querySelector("#turn-1 details.trace[open]") === null`)

	// The phone's view of the open trace: the calls table scrolls in its
	// own box, the page does not scroll sideways.
	b.run("a phone's viewport", chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	var fit struct {
		ScrollWidth, Width int
	}
	b.run("measure", chromedp.Evaluate(`({ scrollWidth: document.documentElement.scrollWidth, width: window.innerWidth })`, &fit))
	require.Equal(t, 390, fit.Width)
	require.LessOrEqual(t, fit.ScrollWidth, 390, "the page does not scroll sideways")
	b.requireAccessible("a turn's trace on a phone")
	b.run("a laptop's viewport", chromedp.EmulateViewport(1280, 800))

	// The list's filters, as a person sets them.
	b.run("to the list", navigate("#/"))
	b.waitFor("all four sessions", shownKeys+` === "calm-chat,pricey-chat,slow-chat,trace-chat"`)
	for _, c := range []struct {
		what    string
		set     chromedp.Action
		want    string
		address string
	}{
		{"with a failed turn", setSelect("#filter-failed", "yes"), "trace-chat", "failed=yes"},
		{"without a failed turn", setSelect("#filter-failed", "no"), "calm-chat,pricey-chat,slow-chat", "failed=no"},
		{"a turn slower than 5 s", chromedp.SetValue("#filter-slower", "5000", chromedp.ByQuery), "slow-chat,trace-chat", "slowerMs=5000"},
		{"costing over $1", chromedp.SetValue("#filter-cost", "1", chromedp.ByQuery), "pricey-chat", "costAbove=1"},
		{"costing over $0.5", chromedp.SetValue("#filter-cost", "0.5", chromedp.ByQuery), "pricey-chat,trace-chat", "costAbove=0.5"},
	} {
		b.click("clear the filters", "#clear-filters")
		b.waitFor("all four sessions again", shownKeys+` === "calm-chat,pricey-chat,slow-chat,trace-chat"`)
		b.run("filter "+c.what, c.set)
		b.click("search", "#search")
		b.waitFor("the sessions "+c.what, shownKeys+fmt.Sprintf(` === %q && location.hash.includes(%q)`, c.want, c.address))
	}
	b.requireAccessible("the list filtered by cost")

	// A hand-edited address with bounds the API cannot take: one too large
	// for an Int is the most it holds, a cost that is no number no bound.
	b.run("an address with bounds out of range", navigate("#/?slowerMs=99999999999&costAbove=1e999"))
	b.waitFor("no session slower than that, and no error",
		textOf("#sessions")+` === "No session matches these filters." && document.querySelector("#filter-slower").value === "2147483647" && `+
			`document.querySelector("#filter-cost").value === ""`)
	require.Empty(t, b.pageErrors(), "the page logged no error")
}
