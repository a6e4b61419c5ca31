package dashboard_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"sessiongraph/internal/apitest"
)

// Find anything: a session by words of its messages (either side, any
// case) or of its items (a tool call's output), and the sessions that
// reference a record by its UUID; a ref shows its UUID with a button that
// copies it.
func TestDashboardFindsSessionsByMessageAndByRecord(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	saffron := uuid.NewString()
	for i, script := range []struct{ key, message, record string }{
		{"search-plain", "what is in my fridge?", uuid.NewString()},
		{"search-saffron", "Find a rice dish with Saffron", saffron},
		{"search-other", "plan the week", uuid.NewString()},
	} {
		r := &agent{t: t, s: s, id: openSession(t, s, map[string]any{"tenant": "acme", "externalKey": script.key, "userID": fmt.Sprint("user-", i)})}
		r.begin(script.message)
		r.read("recipes", map[string]any{"id": script.record, "name": fmt.Sprint("Recipe ", i)})
		r.end("Here you are.", nil)
	}
	// The saffron recipe is read in another session too.
	r := &agent{t: t, s: s, id: openSession(t, s, map[string]any{"tenant": "acme", "externalKey": "search-again"})}
	r.begin("that rice again")
	r.read("recipes", map[string]any{"id": saffron, "name": "Saffron rice"})
	// A session that says "monsoon" only in a tool call's output.
	tool := &agent{t: t, s: s, id: openSession(t, s, map[string]any{"tenant": "acme", "externalKey": "search-tool"})}
	tool.begin("will it rain in Mumbai?")
	tool.items(`{"type":"function_call","call_id":"call_1","name":"forecast","arguments":"{\"city\":\"Mumbai\"}"}`,
		`{"type":"function_call_output","call_id":"call_1","output":"Heavy Monsoon rain until Friday"}`)
	tool.end("Yes, take an umbrella.", nil)

	b := newBrowser(t)
	b.signIn(s.URL, s.AdminKey)
	b.waitFor("the sessions list", `document.querySelectorAll("#sessions tbody tr").length === 5`)
	keys := `[...document.querySelectorAll("#sessions tbody tr")].map(r => r.dataset.key).sort().join()`

	b.run("search by words of a message", chromedp.SetValue("#filter-q", "SAFFRON", chromedp.ByQuery), chromedp.Click("#search", chromedp.ByQuery))
	b.waitFor("the session whose message says it", keys+` === "search-saffron"`)

	b.run("search by words of a tool's output", chromedp.SetValue("#filter-q", "monsoon", chromedp.ByQuery), chromedp.Click("#search", chromedp.ByQuery))
	b.waitFor("the session whose tool call's output says it", keys+` === "search-tool"`)

	b.run("search by a record's UUID", chromedp.SetValue("#filter-q", saffron, chromedp.ByQuery), chromedp.Click("#search", chromedp.ByQuery))
	b.waitFor("both sessions that read the record", keys+` === "search-again,search-saffron"`)

	b.click("open one", `#sessions tr[data-key="search-again"] td a`)
	b.waitFor("the ref's UUID", fmt.Sprintf(`document.querySelector('#refs tr[data-ref="recipe_1"] [data-uuid]')?.dataset.uuid === %q`, saffron))
	b.click("copy it", `#refs tr[data-ref="recipe_1"] button.copy`)
	b.waitFor("a word that it was copied", fmt.Sprintf(`[...document.querySelectorAll("#notices .notice")].some(n => n.textContent.includes(%q))`, "Copied recipe_1's UUID: "+saffron))
	if errs := b.pageErrors(); len(errs) > 0 {
		t.Fatalf("the page logged errors: %v", errs)
	}
}
