package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// clipboard reads what the page copied, from the browser's real clipboard.
func (b *browser) clipboard() string {
	b.t.Helper()
	var text string
	b.run("read the clipboard", chromedp.Evaluate(`navigator.clipboard.readText()`, &text,
		func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	return text
}

// allowClipboard lets the page at origin write and read the clipboard, as a
// user's permission would.
func (b *browser) allowClipboard(origin string) {
	b.t.Helper()
	b.run("allow the clipboard", chromedp.ActionFunc(func(ctx context.Context) error {
		for _, name := range []string{"clipboard-read", "clipboard-write"} {
			perm := &cdpbrowser.PermissionDescriptor{Name: name, AllowWithoutSanitization: true}
			if err := cdpbrowser.SetPermission(perm, cdpbrowser.PermissionSettingGranted).WithOrigin(origin).Do(ctx); err != nil {
				return err
			}
		}
		return nil
	}))
}

// requireCopiedJSON checks that the clipboard holds want as pretty-printed JSON.
func requireCopiedJSON(t *testing.T, copied string, want any) {
	t.Helper()
	require.True(t, strings.Contains(copied, "\n  "), "pretty-printed: %q", copied)
	var got, wanted any
	require.NoError(t, json.Unmarshal([]byte(copied), &got), "the clipboard holds JSON: %q", copied)
	raw, err := json.Marshal(want)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &wanted))
	require.Equal(t, wanted, got)
}

// Artifact content and event payloads show as a JSON tree: objects and
// arrays open at the top two levels and folded deeper, each a <details> to
// unfold, and Copy puts the whole value on the clipboard, pretty-printed.
func TestDashboardShowsJSONAsATreeAndCopiesIt(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	id := openSession(t, s, map[string]any{"tenant": "acme", "externalKey": "json-chat"})
	r := &agent{t: t, s: s, id: id}
	r.begin("Plan my week")
	content := map[string]any{
		"title": "Week plan",
		"days":  []any{map[string]any{"day": "Monday", "meals": []any{"curry", "rice"}}},
		"owner": map[string]any{"name": "Ada", "prefs": map[string]any{"spicy": true, "budget": nil}},
	}
	r.generate("task", content)
	r.read("recipes", map[string]any{"id": uuid.NewString(), "name": "Dal Tadka"})

	b := newBrowser(t)
	b.allowClipboard(s.URL)
	b.signInToSession(s.URL, s.AdminKey, id)

	// The artifact: its content as a tree.
	art := `#artifacts [data-ref="gen_task_1"]`
	b.click("unfold the content", art+" details > summary")
	b.waitFor("the artifact's tree", fmt.Sprintf(`document.querySelector(%q) !== null`, art+" .json-view .json-tree"))
	node := func(key string) string { // the <details> of the object or array under key
		return fmt.Sprintf(`[...document.querySelectorAll(%q)].find(d => d.querySelector(":scope > summary > .json-key")?.textContent === %q)`,
			art+" details.json-node", key+": ")
	}
	b.waitFor("the top two levels open", `document.querySelector(`+fmt.Sprintf("%q", art+" .json-tree > li > details.json-node")+`).open && `+
		node("owner")+`.open && `+node("days")+`.open`)
	b.waitFor("deeper levels folded", `!`+node("prefs")+`.open && !`+node("0")+`.open`)
	b.waitFor("scalars as JSON", `[...document.querySelectorAll(`+fmt.Sprintf("%q", art+" .json-key")+`)].some(k => k.textContent === "title: " && k.nextElementSibling.textContent === '"Week plan"')`)
	b.run("unfold prefs", chromedp.Evaluate(node("prefs")+`.querySelector("summary").click()`, nil))
	b.waitFor("prefs unfolded, with its values", node("prefs")+`.open && `+node("prefs")+`.querySelector("ul").textContent === "budget: nullspicy: true"`)
	b.click("copy the content", art+" .json-view button.copy")
	b.waitFor("a word that it was copied", lastNotice()+` === "Copied gen_task_1's content as JSON."`)
	requireCopiedJSON(t, b.clipboard(), content)

	// A live reload redraws the artifact; what the admin unfolded stays so.
	r.read("recipes", map[string]any{"id": uuid.NewString(), "name": "Kheer"})
	b.waitFor("the reload", `document.querySelector('#refs tr[data-ref="recipe_2"]') !== null`)
	b.waitFor("prefs still unfolded", node("prefs")+`.open && `+node("owner")+`.open`)

	// An event's payload: one line, unfolding to its tree.
	row := `#events tbody tr[data-kind="refs.read"]`
	b.waitFor("the refs.read event", fmt.Sprintf(`document.querySelector(%q) !== null`, row))
	b.click("unfold its payload", row+" td.payload summary")
	b.waitFor("its tree", fmt.Sprintf(`document.querySelector(%q) !== null`, row+" .json-view .json-tree"))
	var seq int
	b.run("read its sequence", chromedp.Evaluate(fmt.Sprintf(`Number(document.querySelector(%q).dataset.sequence)`, row), &seq))
	b.click("copy the payload", row+" .json-view button.copy")
	b.waitFor("a word that it was copied", lastNotice()+fmt.Sprintf(` === "Copied event %d's payload as JSON."`, seq))
	var payload struct {
		Session struct {
			Events struct {
				Edges []struct {
					Node struct{ Payload map[string]any }
				}
			}
		}
	}
	s.MustDo(t, `query($id: ID!, $seq: Int!) { session(id: $id) { events(first: 1, where: {sequence: $seq}) { edges { node { payload } } } } }`,
		map[string]any{"id": id, "seq": seq}, &payload)
	require.Len(t, payload.Session.Events.Edges, 1)
	requireCopiedJSON(t, b.clipboard(), payload.Session.Events.Edges[0].Node.Payload)
	require.Empty(t, b.pageErrors(), "the page logged no error")
}
