package dashboard_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// The session view offers only what the key's role may do: expire and
// delete to ADMIN, retain and release to ADMIN and CLIENT, nothing to a
// READER, who still reads everything.
func TestDashboardShowsActionsByRole(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	id := openSession(t, s, map[string]any{"tenant": "acme", "externalKey": "roles-chat"})
	r := &agent{t: t, s: s, id: id}
	r.begin("What can I cook?")
	r.read("recipes", map[string]any{"id": uuid.NewString(), "name": "Dal Tadka"}, map[string]any{"id": uuid.NewString(), "name": "Kheer"})
	r.retain("recipe_1", "user loves it")
	reader := createKey(t, s, "READER", "acme")
	client := createKey(t, s, "CLIENT", "acme")
	b := newBrowser(t)

	open := func(key, role string) {
		t.Helper()
		b.signIn(s.URL, key)
		b.waitFor("signed in as "+role, textOf("#viewer-role")+` === "`+role+`"`)
		b.run("open the session", navigate("#/sessions/"+id))
		b.waitFor("the session", textOf("#session-status")+` === "ACTIVE" && document.querySelectorAll("#refs tbody tr").length === 2`)
	}
	count := func(sel string) string { return `document.querySelectorAll(` + "`" + sel + "`" + `).length` }

	open(reader, "READER")
	b.waitFor("no action for a reader", count("#expire-session")+` === 0 && `+count("#delete-session")+` === 0 && `+count("#refs button.act")+` === 0`)
	b.waitFor("but the refs, tiers and all", textOf(`#refs tr[data-ref="recipe_1"] .tier`)+` === "active kept: user loves it"`)
	b.click("sign out", "#sign-out")

	open(client, "CLIENT")
	b.waitFor("retain and release for a client, no expire or delete", count("#expire-session")+` === 0 && `+count("#delete-session")+` === 0 && `+
		count("#refs button.act")+` === 2 && `+textOf(`#refs tr[data-ref="recipe_1"] button.act`)+` === "Release"`)
	b.click("release recipe_1", `#refs tr[data-ref="recipe_1"] button.act`)
	b.waitFor("released by the client", textOf(`#refs tr[data-ref="recipe_1"] button.act`)+` === "Retain…"`)
	b.click("sign out", "#sign-out")

	open(s.AdminKey, "ADMIN")
	b.waitFor("everything for an admin", count("#expire-session")+` === 1 && `+count("#delete-session")+` === 1 && `+count("#refs button.act")+` === 2`)
	require.Empty(t, b.pageErrors(), "the page logged no error")
}
