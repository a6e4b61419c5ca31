package dashboard_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// liveEventBudget is what one live event may cost an open session page,
// both ways, HTTP and WebSocket together.
const liveEventBudget = 10 * 1024

// traffic counts what the page sends and receives, from the DevTools
// Network domain: each HTTP response's encodedDataLength (headers and body
// as they crossed the wire) and each request's body, each WebSocket frame's
// payload either way (its text, before any compression: an upper bound).
type traffic struct {
	mu       sync.Mutex
	bytes    int
	inFlight map[network.RequestID]bool
	pushes   int // contextUpdated frames: the context tab's rebuilds
}

func watchTraffic(t *testing.T, b *browser) *traffic {
	t.Helper()
	tr := &traffic{inFlight: map[network.RequestID]bool{}}
	chromedp.ListenTarget(b.ctx, func(ev any) {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			tr.inFlight[ev.RequestID] = true
			for _, e := range ev.Request.PostDataEntries {
				body, _ := base64.StdEncoding.DecodeString(e.Bytes)
				tr.bytes += len(body)
			}
		case *network.EventLoadingFinished:
			delete(tr.inFlight, ev.RequestID)
			tr.bytes += int(ev.EncodedDataLength)
		case *network.EventLoadingFailed:
			delete(tr.inFlight, ev.RequestID)
		case *network.EventWebSocketFrameReceived:
			tr.bytes += len(ev.Response.PayloadData)
			if strings.Contains(ev.Response.PayloadData, `"contextUpdated"`) {
				tr.pushes++
			}
		case *network.EventWebSocketFrameSent:
			tr.bytes += len(ev.Response.PayloadData)
		}
	})
	b.run("watch the network", network.Enable())
	return tr
}

// reset starts a new count and returns what the last one came to.
func (tr *traffic) reset() (bytes, pushes int) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	bytes, pushes = tr.bytes, tr.pushes
	tr.bytes, tr.pushes = 0, 0
	return bytes, pushes
}

// settled says whether every request the page made has finished and the
// context tab has been rebuilt at least once since reset.
func (tr *traffic) settled() bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return len(tr.inFlight) == 0 && tr.pushes > 0
}

// idle says whether every request the page made has finished.
func (tr *traffic) idle() bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return len(tr.inFlight) == 0
}

// countFetches makes the page count its requests in flight, bodies read:
// a condition on the page can then say that it is done with an event.
const countFetches = `window.fetchesInFlight = 0;
const pageFetch = window.fetch.bind(window);
window.fetch = async (...args) => {
	window.fetchesInFlight++;
	try { const res = await pageFetch(...args); await res.clone().text(); return res; }
	finally { window.fetchesInFlight--; }
};`

// seedFiftyTurns scripts a session of 50 turns; each reads a recipe and
// records THINK and REPLY builds, so the session holds 50 refs and 100
// receipts whose texts grow with the conversation.
func seedFiftyTurns(t *testing.T, s *apitest.Server) *agent {
	t.Helper()
	r := &agent{t: t, s: s, id: openSession(t, s, map[string]any{"tenant": "acme", "externalKey": "fifty-turns",
		"systemPrompt": "You are a kitchen assistant. Refer to entities by their refs."})}
	for n := 1; n <= 50; n++ {
		r.begin(fmt.Sprintf("Question %d: what could I cook tonight with the rice, the lentils and the spinach that are left, in under forty minutes?", n))
		r.read("recipes", map[string]any{"id": uuid.NewString(), "name": fmt.Sprintf("Recipe %d", n), "cuisine": "Indian",
			"instructions": "Rinse the lentils, simmer them with turmeric, temper with cumin and garlic, fold in the spinach."})
		r.recordContext("THINK")
		r.recordContext("REPLY")
		r.end(fmt.Sprintf("Answer %d: a dal with spinach (recipe_%d), about thirty minutes.", n, n), map[string]any{
			"decision": "read", "goal": "suggest a dinner",
			"steps": []map[string]any{{"step": 1, "kind": "read", "description": "read recipes", "outcome": "1 recipe", "refs": []string{fmt.Sprintf("recipe_%d", n)}}},
		})
	}
	return r
}

// An open session page follows its session by applying each event to what
// it shows: a 50-turn session with 100 recorded builds is open, and seven
// writes of different kinds (a turn begun, a record read, a ref retained, a
// build recorded, an artifact generated, the turn ended, the session
// expired) each show without a reload, for under liveEventBudget of
// traffic per event; a prompt's text comes when it is opened.
func TestDashboardLiveEventsCostLittle(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	r := seedFiftyTurns(t, s)

	b := newBrowser(t)
	tr := watchTraffic(t, b)
	b.run("count the page's requests", chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := page.AddScriptToEvaluateOnNewDocument(countFetches).Do(ctx)
		return err
	}))
	b.signInToSession(s.URL, s.AdminKey, r.id)
	b.waitFor("the session at turn 50", textOf("#session-turn")+` === "50" && document.querySelectorAll("#turns .turn").length === 50 && `+
		`document.querySelectorAll("#refs tbody tr").length === 50 && document.querySelectorAll("#receipt-chart .receipt").length === 50`)
	b.waitFor("live updates", `document.querySelector("#live").dataset.state === "live"`)
	b.waitFor("the UNDERSTAND context", `document.querySelector('#context-panel .ctx-build[data-node="UNDERSTAND"]') !== null`)
	b.waitFor("the page idle", `window.fetchesInFlight === 0`)
	require.Eventually(t, tr.settled, waitDeadline, 50*time.Millisecond, "the opening requests finished")
	opened, _ := tr.reset()
	t.Logf("opening the session page: %d bytes", opened)

	type cost struct {
		what          string
		bytes, events int
	}
	var costs []cost
	before := newestEvent(t, s, r.id)
	// measure writes, waits until the page shows what was written and is
	// done with it (its requests finished, and the context tab rebuilt),
	// and counts what that cost.
	measure := func(what string, write func(), shown string) {
		t.Helper()
		write()
		newest := newestEvent(t, s, r.id)
		n := newest - before
		before = newest
		b.waitFor(what+", shown", shown)
		b.waitFor("the event in the log", fmt.Sprintf(`document.querySelector("#events tbody tr")?.dataset.sequence === "%d"`, newest))
		b.waitFor("the page done with it", `window.fetchesInFlight === 0`)
		require.Eventually(t, tr.settled, waitDeadline, 50*time.Millisecond, "%s: the requests finished and the context was rebuilt", what)
		bytes, pushes := tr.reset()
		t.Logf("%s: %d events, %d bytes (%d context rebuilds)", what, n, bytes, pushes)
		costs = append(costs, cost{what, bytes, n})
	}

	measure("a turn begun", func() { r.begin("Question 51: and a dessert with the milk?") },
		textOf("#session-turn")+` === "51" && `+textOf(`#turns .turn[data-turn="51"] .badge`)+` === "OPEN" && `+
			`document.querySelectorAll("#turns .turn").length === 50`)
	// From here on the new turn's trace is open: its events join it as they
	// come, and its items, builds, calls and end read it again.
	b.run("open turn 51's trace", chromedp.Evaluate(`document.querySelector("#turn-51 details.trace").open = true`, nil))
	b.waitFor("its user message and first event", `document.querySelectorAll("#turn-51 .items > li").length === 1 && `+
		`[...document.querySelectorAll("#turn-51 .trace-events tbody tr")].map(r => r.dataset.kind).join() === "turn.began"`)
	b.waitFor("the page idle", `window.fetchesInFlight === 0`)
	require.Eventually(t, tr.idle, waitDeadline, 50*time.Millisecond, "the trace's request finished")
	trace, _ := tr.reset()
	t.Logf("opening a turn's trace: %d bytes", trace)
	measure("a record read", func() { r.read("recipes", map[string]any{"id": uuid.NewString(), "name": "Kheer"}) },
		textOf(`#refs tr[data-ref="recipe_51"] td:nth-child(3)`)+` === "Kheer" && `+
			`document.querySelector('#turn-51 .trace-events tr[data-kind="refs.read"]') !== null`)
	measure("a ref retained", func() { r.retain("recipe_3", "the user's favourite") },
		textOf(`#refs tr[data-ref="recipe_3"] .tier`)+`.endsWith("kept: the user's favourite")`)
	measure("a build recorded", func() { r.recordContext("THINK") },
		`document.querySelector('#receipt-chart .receipt[data-turn="51"]') !== null`)
	measure("a model call recorded", func() { r.modelCall("THINK", "gpt-4o", 800, 0.01, "") },
		textOf(`#turn-51 .trace-totals`)+` === "1 item · 1 model call · 800 ms · $0.01" && `+
			`document.querySelectorAll("#turn-51 table.calls tbody tr").length === 1`)
	measure("a tool call and its output recorded, the turn's trace open", func() {
		r.items(`{"type":"function_call","call_id":"c1","name":"find_recipe","arguments":"{\"q\":\"kheer\"}"}`,
			`{"type":"function_call_output","call_id":"c1","output":"recipe_51"}`)
	}, `[...document.querySelectorAll("#turn-51 .items > li")].map(e => e.dataset.kind).join() === "MESSAGE,FUNCTION_CALL,FUNCTION_CALL_OUTPUT"`)
	measure("an artifact generated", func() { r.generate("task", map[string]any{"title": "Buy cardamom"}) },
		textOf(`#artifacts [data-ref="gen_task_1"] h3`)+` === "gen_task_1 Buy cardamom PENDING"`)
	measure("the turn ended", func() { r.end("Kheer: rice simmered in milk with cardamom.", nil) },
		textOf(`#turns .turn[data-turn="51"] .badge`)+` === "COMPLETED" && `+
			`document.querySelector('#turn-51 .trace-events tbody tr:last-child')?.dataset.kind === "turn.ended"`)

	// The timeline holds the newest page, as a load shows it: turn 1 gave
	// way to turn 51, and is a click away.
	b.waitFor("the newest 50 turns", `document.querySelectorAll("#turns .turn").length === 50 && `+
		`document.querySelector('#turns .turn[data-turn="1"]') === null && !document.querySelector("#older-turns").hidden`)
	b.click("show older turns", "#older-turns")
	b.waitFor("turn 1 back", `document.querySelectorAll("#turns .turn").length === 51 && document.querySelector('#turns .turn[data-turn="1"]') !== null`)

	// A prompt's text is read when it is opened: a recorded build's, and
	// the context tab's.
	b.run("open turn 51's THINK prompt", chromedp.Evaluate(`document.querySelector('#receipt-chart .receipt[data-turn="51"] details').open = true`, nil))
	b.waitFor("its text", `/Kheer/.test(document.querySelector('#receipt-chart .receipt[data-turn="51"] pre').textContent)`)
	b.run("open the UNDERSTAND prompt", chromedp.Evaluate(`document.querySelector('#context-panel details[data-key="prompt"]').open = true`, nil))
	b.waitFor("its text", `/Kheer/.test(document.querySelector('#context-panel pre[data-text="prompt"]').textContent)`)
	b.waitFor("the page idle", `window.fetchesInFlight === 0`)
	require.Eventually(t, tr.idle, waitDeadline, 50*time.Millisecond, "the prompts' requests finished")
	prompts, _ := tr.reset()
	t.Logf("opening two prompts: %d bytes", prompts)

	// Another client expires the session: the header says so, and no
	// action that writes is offered any more. The context tab's prompt is
	// still open, so its rebuild reads that text again, within the budget.
	measure("the session expired elsewhere", func() {
		s.MustDo(t, `mutation($id: ID!) { expireSession(input: {id: $id}) { session { id } } }`, map[string]any{"id": r.id}, nil)
	}, textOf("#session-status")+` === "EXPIRED" && document.querySelector("#expire-session").disabled && `+
		`[...document.querySelectorAll("#refs button.act")].every(b => b.disabled)`)

	total, events := 0, 0
	for _, c := range costs {
		total += c.bytes
		events += c.events
	}
	t.Logf("live events: %d bytes for %d events, %d bytes an event", total, events, total/events)
	for _, c := range costs {
		require.Positive(t, c.events, "%s wrote an event", c.what)
		require.Less(t, c.bytes, c.events*liveEventBudget, "%s: %d bytes for %d events", c.what, c.bytes, c.events)
	}
	requireOneLoad(t, b)
	require.Empty(t, b.pageErrors(), "the page logged no error")
}

// Kinds the page applies otherwise: a ref released and a turn failed are
// read in place, and a conversation reset, which deletes the turns, reads
// the whole session again; all without a reload.
func TestDashboardAppliesReleasesFailuresAndResets(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	r := &agent{t: t, s: s, id: openSession(t, s, map[string]any{"tenant": "acme", "externalKey": "reset-chat"})}
	r.begin("What can I cook?")
	r.read("recipes", map[string]any{"id": uuid.NewString(), "name": "Dal Tadka"})
	r.retain("recipe_1", "user loves it")
	r.end("Dal Tadka (recipe_1).", nil)

	b := newBrowser(t)
	b.signInToSession(s.URL, s.AdminKey, r.id)
	b.waitFor("recipe_1 retained", textOf(`#refs tr[data-ref="recipe_1"] .tier`)+` === "active kept: user loves it"`)
	b.waitFor("live updates", `document.querySelector("#live").dataset.state === "live"`)

	r.do(`mutation($id: ID!) { releaseRef(input: {sessionID: $id, ref: "recipe_1"}) { ref { ref } } }`, nil)
	b.waitFor("recipe_1 released", textOf(`#refs tr[data-ref="recipe_1"] .tier`)+` === "active"`)

	r.begin("And for dessert?")
	r.do(`mutation($id: ID!) { failTurn(input: {sessionID: $id, reason: "the model timed out"}) { turn { number } } }`, nil)
	b.waitFor("turn 2 failed", textOf(`#turns .turn[data-turn="2"] .badge`)+` === "FAILED"`)

	r.do(`mutation($id: ID!) { resetConversation(input: {sessionID: $id}) { session { id } } }`, nil)
	b.waitFor("no turns after the reset", textOf("#turns")+` === "No turns yet."`)
	b.waitFor("the refs kept", `document.querySelector('#refs tr[data-ref="recipe_1"]') !== null`)
	requireOneLoad(t, b)
	require.Empty(t, b.pageErrors(), "the page logged no error")
}
