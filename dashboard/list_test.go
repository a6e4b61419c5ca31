package dashboard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// rowKeys is the expression for the external keys of the list's rows, in order.
const rowKeys = `[...document.querySelectorAll("#sessions tbody tr")].map(r => r.dataset.key).join()`

// openList signs in with key and waits for n rows and live updates.
func openList(t *testing.T, s *apitest.Server, key string, n int) *browser {
	t.Helper()
	b := newBrowser(t)
	b.signIn(s.URL, key)
	b.waitFor("the sessions list", fmt.Sprintf(`document.querySelectorAll("#sessions tbody tr").length === %d`, n))
	b.waitFor("live updates", `document.querySelector("#live").dataset.state === "live"`)
	return b
}

// feedDeadline is under the list's one-minute poll: what shows within it
// came by the feed.
const feedDeadline = 40 * time.Second

// A turn begun and ended elsewhere shows in the list's turn count within
// a moment, from the feed: the list's slow poll is a minute away.
func TestListFollowsTurnsLive(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	other := openSession(t, s, map[string]any{"tenant": "acme", "externalKey": "quiet"})
	r := &agent{t: t, s: s, id: openSession(t, s, map[string]any{"tenant": "acme", "externalKey": "busy"})}
	b := openList(t, s, s.AdminKey, 2)
	turns := func(key string) string { return textOf(fmt.Sprintf(`#sessions tr[data-key=%q] td:nth-child(6)`, key)) }
	b.waitFor("no turn yet", turns("busy")+` === "0"`)

	// The list polls once a minute: what arrives well within that came by
	// the feed. (It waited 3 s, which a loaded machine overran.)
	r.begin("what can I cook tonight?")
	r.end("Rice with what is left.", nil)
	b.waitWithin("the new turn count, from the feed", turns("busy")+` === "1"`, feedDeadline)
	b.waitFor("the row marked", textOf(`#sessions tr[data-key="busy"] .change-tag`)+` === "turn ended"`)
	b.waitFor("the other row unchanged", turns("quiet")+` === "0" && !document.querySelector('#sessions tr[data-key="quiet"]').classList.contains("changed")`)

	// A burst of turns on two sessions settles on the last counts.
	q := &agent{t: t, s: s, id: other}
	for i := range 5 {
		r.begin(fmt.Sprint("again ", i))
		r.end("ok", nil)
		q.begin(fmt.Sprint("me too ", i))
		q.end("ok", nil)
	}
	b.waitWithin("the counts after the burst, from the feed", turns("busy")+` === "6" && `+turns("quiet")+` === "5"`, feedDeadline)
	require.Empty(t, b.pageErrors(), "the page logged no error")
}

// A READER sees no action it may not take; an ADMIN sees them.
func TestListShowsAdminActionsToAdminsOnly(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	openSession(t, s, map[string]any{"tenant": "acme", "externalKey": "read-me"})
	reader := createKey(t, s, "READER", "acme")

	b := openList(t, s, reader, 1)
	b.waitFor("the reader's role", textOf("#viewer-role")+` === "READER"`)
	var buttons string
	b.run("read the list's buttons", chromedp.Evaluate(`[...document.querySelectorAll("main button")].filter(b => !b.hidden).map(b => b.id || b.textContent).join()`, &buttons))
	// The fact search (held-go) reads, as a reader may.
	require.Equal(t, "search,clear-filters,prev-page,next-page,held-go", buttons, "no Expire matching… for a reader")

	b.click("sign out", "#sign-out")
	b.run("sign in as an admin", chromedp.WaitVisible("#api-key", chromedp.ByQuery), chromedp.SendKeys("#api-key", s.AdminKey, chromedp.ByQuery),
		chromedp.Click("#sign-in", chromedp.ByQuery))
	b.waitFor("the admin's expire button", textOf("#viewer-role")+` === "ADMIN" && `+textOf("#bulk-expire")+` === "Expire matching…"`)
	require.Empty(t, b.pageErrors(), "the page logged no error")
}

// With no filter, "Expire matching…" is every active session: it says how
// many and expires them all.
func TestListExpiresEveryActiveSessionWithNoFilter(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	for i := range 3 {
		openSession(t, s, map[string]any{"tenant": []string{"acme", "globex", "initech"}[i], "externalKey": fmt.Sprint("all-", i)})
	}
	gone := openSession(t, s, map[string]any{"tenant": "acme", "externalKey": "already-expired"})
	s.MustDo(t, `mutation($id: ID!) { expireSession(input: {id: $id}) { session { id } } }`, map[string]any{"id": gone}, nil)

	b := openList(t, s, s.AdminKey, 4)
	b.click("bulk expire", "#bulk-expire")
	b.waitFor("the confirmation says all tenants", textOf("#dialog-body")+` === "Expire all 3 active sessions of all tenants? No filter is applied. They stay readable until purged; their keys open fresh sessions."`)
	b.click("confirm", "#dialog-confirm")
	b.waitFor("the outcome", lastNotice()+` === "Expired 3 sessions."`)
	b.waitFor("every row expired", `[...document.querySelectorAll("#sessions tbody tr .badge")].every(e => e.textContent === "EXPIRED")`)
	var active struct{ Sessions struct{ TotalCount int } }
	s.MustDo(t, `{ sessions(where: {status: ACTIVE}) { totalCount } }`, nil, &active)
	require.Zero(t, active.Sessions.TotalCount, "every active session expired on the server")
	require.Empty(t, b.pageErrors(), "the page logged no error")
}

// "Expire matching…" acts on the filters the list shows, not on what is
// typed in the form: with one tenant's sessions listed, clearing the tenant
// box without searching still offers that tenant's sessions only.
func TestListExpiresWhatTheListShowsNotWhatIsTyped(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	for i := range 5 {
		openSession(t, s, map[string]any{"tenant": []string{"acme", "globex", "globex", "initech", "acme"}[i], "externalKey": fmt.Sprint("k-", i)})
	}
	b := openList(t, s, s.AdminKey, 5)
	b.run("filter by tenant", chromedp.SendKeys("#filter-tenant", "globex", chromedp.ByQuery), chromedp.Click("#search", chromedp.ByQuery))
	b.waitFor("globex only", textOf("#list-summary")+` === "1–2 of 2 sessions"`)
	b.run("clear the tenant box without searching", chromedp.Evaluate(`document.querySelector("#filter-tenant").value = ""`, nil))
	b.click("bulk expire", "#bulk-expire")
	b.waitFor("the confirmation counts the listed sessions", textOf("#dialog-body")+` === "Expire 2 active sessions of all tenants where the tenant's name contains “globex”? They stay readable until purged; their keys open fresh sessions."`)
	b.click("confirm", "#dialog-confirm")
	b.waitFor("the outcome", lastNotice()+` === "Expired 2 sessions."`)
	var active struct{ Sessions struct{ TotalCount int } }
	s.MustDo(t, `{ sessions(where: {status: ACTIVE}) { totalCount } }`, nil, &active)
	require.Equal(t, 3, active.Sessions.TotalCount, "the other tenants' sessions stay active")
	require.Empty(t, b.pageErrors(), "the page logged no error")
}

// Above 100 active sessions, expiring with no filter asks for the count
// typed back: a wrong count does not expire anything.
func TestListExpiringEverythingAsksForTheCount(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	fillSessions(t, s, 101)
	b := openList(t, s, s.AdminKey, 20)
	b.click("bulk expire", "#bulk-expire")
	b.waitFor("the confirmation asks for the count", textOf("#dialog-body")+` === "Expire all 101 active sessions of all tenants? No filter is applied. They stay readable until purged; their keys open fresh sessions." && `+
		textOf(`label[for="dialog-reason"]`)+` === "Type 101 to confirm"`)
	b.run("type a wrong count", chromedp.SendKeys("#dialog-reason", "100", chromedp.ByQuery))
	b.click("confirm", "#dialog-confirm")
	var open bool
	b.run("the dialog stays", chromedp.Evaluate(`document.querySelector("dialog[open]") !== null`, &open))
	require.True(t, open, "a wrong count does not confirm")
	b.run("type the count", chromedp.Evaluate(`document.querySelector("#dialog-reason").value = ""`, nil), chromedp.SendKeys("#dialog-reason", "101", chromedp.ByQuery))
	b.click("confirm", "#dialog-confirm")
	b.waitFor("the outcome", lastNotice()+` === "Expired 101 sessions."`)
	var active struct{ Sessions struct{ TotalCount int } }
	s.MustDo(t, `{ sessions(where: {status: ACTIVE}) { totalCount } }`, nil, &active)
	require.Zero(t, active.Sessions.TotalCount)
	require.Empty(t, b.pageErrors(), "the page logged no error")
}

// A filter does not spare the typed count: "e" is in most tenants' names,
// and 105 sessions of seven tenants ask for the count typed back, with the
// filter named. The filter reaches the expiry: a tenant without an "e"
// keeps its sessions.
func TestListExpiringManyWithAFilterAsksForTheCount(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	fillSessions(t, s, 105) // tenant-0 … tenant-6
	for i := range 2 {
		openSession(t, s, map[string]any{"tenant": "zz", "externalKey": fmt.Sprint("spared-", i)})
	}
	b := openList(t, s, s.AdminKey, 20)
	b.run("filter by tenant e", chromedp.SendKeys("#filter-tenant", "e", chromedp.ByQuery), chromedp.Click("#search", chromedp.ByQuery))
	b.waitFor("the filtered list", textOf("#list-summary")+` === "1–20 of 105 sessions"`)
	b.click("bulk expire", "#bulk-expire")
	b.waitFor("the confirmation names the filter and asks for the count", textOf("#dialog-body")+` === "Expire 105 active sessions of all tenants where the tenant's name contains “e”? They stay readable until purged; their keys open fresh sessions." && `+
		textOf(`label[for="dialog-reason"]`)+` === "Type 105 to confirm"`)
	b.click("confirm without the count", "#dialog-confirm")
	var open bool
	b.run("the dialog stays", chromedp.Evaluate(`document.querySelector("dialog[open]") !== null`, &open))
	require.True(t, open, "no count, no expiry")
	b.run("type the count", chromedp.SendKeys("#dialog-reason", "105", chromedp.ByQuery))
	b.click("confirm", "#dialog-confirm")
	b.waitFor("the outcome", lastNotice()+` === "Expired 105 sessions."`)
	var active struct{ Sessions struct{ TotalCount int } }
	s.MustDo(t, `{ sessions(where: {status: ACTIVE}) { totalCount } }`, nil, &active)
	require.Equal(t, 2, active.Sessions.TotalCount, "tenant zz's sessions stay active")
	require.Empty(t, b.pageErrors(), "the page logged no error")
}

// Bulk expiry acts on the sessions it counted: sessions opened while the
// dialog is open stay active, a counted one written to meanwhile still
// expires, and one expired elsewhere meanwhile is said to be missing.
func TestListBulkExpiryActsOnWhatItCounted(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	var counted []string
	for i := range 4 {
		counted = append(counted, openSession(t, s, map[string]any{"tenant": "acme", "externalKey": fmt.Sprint("counted-", i)}))
	}
	openSession(t, s, map[string]any{"tenant": "globex", "externalKey": "other"})
	b := openList(t, s, s.AdminKey, 5)
	b.run("filter by tenant", chromedp.SendKeys("#filter-tenant", "acme", chromedp.ByQuery), chromedp.Click("#search", chromedp.ByQuery))
	b.waitFor("acme only", textOf("#list-summary")+` === "1–4 of 4 sessions"`)
	b.click("bulk expire", "#bulk-expire")
	b.waitFor("the confirmation counts 4", textOf("#dialog-body")+`.startsWith("Expire 4 active sessions ")`)

	// Writes while the admin reads the dialog.
	for i := range 2 {
		openSession(t, s, map[string]any{"tenant": "acme", "externalKey": fmt.Sprint("opened-meanwhile-", i)})
	}
	(&agent{t: t, s: s, id: counted[0]}).begin("still here")
	s.MustDo(t, `mutation($id: ID!) { expireSession(input: {id: $id}) { session { id } } }`, map[string]any{"id": counted[1]}, nil)

	b.click("confirm", "#dialog-confirm")
	b.waitFor("the outcome", lastNotice()+` === "Expired 3 sessions. 1 of the 4 counted had expired or stopped matching meanwhile."`)
	var out struct {
		Sessions struct {
			Edges []struct{ Node struct{ ExternalKey string } }
		}
	}
	s.MustDo(t, `{ sessions(where: {status: ACTIVE}, orderBy: [{field: CREATED_AT, direction: ASC}]) { edges { node { externalKey } } } }`, nil, &out)
	var keys []string
	for _, e := range out.Sessions.Edges {
		keys = append(keys, e.Node.ExternalKey)
	}
	require.Equal(t, []string{"other", "opened-meanwhile-0", "opened-meanwhile-1"}, keys, "the sessions opened meanwhile stay active")
	require.Empty(t, b.pageErrors(), "the page logged no error")
}

// Part of a tenant's name, in any case, finds its sessions.
func TestListTenantFilterFindsPartOfAName(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	for _, tenant := range []string{"Globex-EU", "globex-us", "acme"} {
		openSession(t, s, map[string]any{"tenant": tenant, "externalKey": "in-" + strings.ToLower(tenant)})
	}
	b := openList(t, s, s.AdminKey, 3)
	b.run("filter by part of a tenant", chromedp.SendKeys("#filter-tenant", "GLOBEX", chromedp.ByQuery), chromedp.Click("#search", chromedp.ByQuery))
	b.waitFor("both globex tenants", `[...document.querySelectorAll("#sessions tbody tr")].map(r => r.dataset.key).sort().join() === "in-globex-eu,in-globex-us"`)
	require.Empty(t, b.pageErrors(), "the page logged no error")
}

// The list's filters, sort and page are in the address: a reload shows the
// same list, and back returns to the list before.
func TestListStateLivesInTheAddress(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	for i := range 23 {
		openSession(t, s, map[string]any{"tenant": "acme-eu", "externalKey": fmt.Sprintf("eu-%02d", i)})
	}
	expired := openSession(t, s, map[string]any{"tenant": "acme-eu", "externalKey": "eu-expired"})
	s.MustDo(t, `mutation($id: ID!) { expireSession(input: {id: $id}) { session { id } } }`, map[string]any{"id": expired}, nil)
	openSession(t, s, map[string]any{"tenant": "globex", "externalKey": "gl-1"})
	b := openList(t, s, s.AdminKey, 20)
	var hash, keys string
	form := `["#filter-q", "#filter-tenant", "#filter-status", "#filter-sort", "#filter-dir"].map(s => document.querySelector(s).value).join("|")`

	// Filter and sort: the address says so.
	b.run("filter and sort", chromedp.SendKeys("#filter-tenant", "acme", chromedp.ByQuery), setSelect("#filter-status", "ACTIVE"),
		setSelect("#filter-sort", "CREATED_AT"), setSelect("#filter-dir", "ASC"), chromedp.Click("#search", chromedp.ByQuery))
	b.waitFor("the filtered list", textOf("#list-summary")+` === "1–20 of 23 sessions" && `+rowKeys+`.startsWith("eu-00,eu-01,")`)
	b.run("read the address", chromedp.Evaluate(`location.hash`, &hash))
	require.Equal(t, "#/?tenant=acme&status=ACTIVE&sort=CREATED_AT&dir=ASC", hash)

	// The next page, then a reload: the same page of the same list.
	b.click("next page", "#next-page")
	b.waitFor("page two", textOf("#list-summary")+` === "21–23 of 23 sessions" && `+rowKeys+` === "eu-20,eu-21,eu-22"`)
	b.run("read the address", chromedp.Evaluate(`location.hash`, &hash))
	require.Regexp(t, `^#/\?tenant=acme&status=ACTIVE&sort=CREATED_AT&dir=ASC&page=2&after=.+$`, hash)
	b.run("reload", chromedp.Reload())
	b.waitFor("page two again", textOf("#list-summary")+` === "21–23 of 23 sessions" && `+rowKeys+` === "eu-20,eu-21,eu-22"`)
	b.waitFor("the form as it was", form+` === "|acme|ACTIVE|CREATED_AT|ASC"`)

	// Previous, read back from the reloaded page's own cursor.
	b.click("previous page", "#prev-page")
	b.waitFor("page one", textOf("#list-summary")+` === "1–20 of 23 sessions" && `+rowKeys+`.startsWith("eu-00,eu-01,") && document.querySelector("#prev-page").disabled`)

	// Another search, then back: the list before it.
	b.run("search for one key", chromedp.SetValue("#filter-q", "eu-07", chromedp.ByQuery), chromedp.Click("#search", chromedp.ByQuery))
	b.waitFor("one match", rowKeys+` === "eu-07"`)
	b.run("back", chromedp.NavigateBack())
	b.waitFor("the list before the search", textOf("#list-summary")+` === "1–20 of 23 sessions" && `+form+` === "|acme|ACTIVE|CREATED_AT|ASC"`)
	b.run("back", chromedp.NavigateBack())
	b.waitFor("page two before it", rowKeys+` === "eu-20,eu-21,eu-22"`)
	b.run("forward", chromedp.NavigateForward())
	b.waitFor("page one again", rowKeys+`.startsWith("eu-00,eu-01,")`)

	// A session opened from the list, then back: the same list.
	b.click("open a session", `#sessions tr[data-key="eu-03"] a`)
	b.waitFor("the session", textOf("#session-status")+` === "ACTIVE"`)
	b.run("back", chromedp.NavigateBack())
	b.waitFor("the list as it was", textOf("#list-summary")+` === "1–20 of 23 sessions" && `+form+` === "|acme|ACTIVE|CREATED_AT|ASC"`)
	b.run("read the rows", chromedp.Evaluate(rowKeys, &keys))
	require.True(t, strings.HasPrefix(keys, "eu-00,eu-01,"), keys)

	// The session's "All sessions" link leads back to the same list too.
	b.click("open it again", `#sessions tr[data-key="eu-03"] a`)
	b.click("all sessions", `.crumbs a`)
	b.waitFor("the list as it was, by the link", textOf("#list-summary")+` === "1–20 of 23 sessions" && `+form+` === "|acme|ACTIVE|CREATED_AT|ASC"`)

	// Clear: every session, and an address with nothing in it.
	b.click("clear", "#clear-filters")
	b.waitFor("every session", textOf("#list-summary")+` === "1–20 of 25 sessions"`)
	b.run("read the address", chromedp.Evaluate(`location.hash`, &hash))
	require.Equal(t, "#/", hash)

	// A hand-edited address with a sort the form does not offer: the default.
	b.run("edit the address", chromedp.Evaluate(`location.hash = "#/?tenant=globex&sort=BOGUS"`, nil))
	b.waitFor("globex, by last active", rowKeys+` === "gl-1" && `+form+` === "|globex||LAST_ACTIVE_AT|DESC"`)
	require.Empty(t, b.pageErrors(), "the page logged no error")
}

// A row is marked for a change that came after the page showed it, never
// for one the page already shows. The feed starts from a cursor read before
// the list, so a change a still-open transaction held back from the feed
// arrives after the list that already shows it: an expiry committed while
// another transaction was open reaches the page only once that one ends.
func TestListMarksOnlyChangesNewerThanThePage(t *testing.T) {
	t.Parallel()
	s := apitest.New(t)
	ctx := context.Background()
	earlier := openSession(t, s, map[string]any{"tenant": "acme", "externalKey": "expired-before"})
	later := openSession(t, s, map[string]any{"tenant": "acme", "externalKey": "expired-after"})

	held, err := s.DB.BeginTx(ctx, nil)
	require.NoError(t, err)
	defer held.Rollback()
	_, err = held.ExecContext(ctx, `SELECT pg_current_xact_id()`) // holds the feed's horizon
	require.NoError(t, err)
	s.MustDo(t, `mutation($id: ID!) { expireSession(input: {id: $id}) { session { id } } }`, map[string]any{"id": earlier}, nil)

	b := openList(t, s, s.AdminKey, 2)
	status := func(key string) string { return textOf(fmt.Sprintf(`#sessions tr[data-key=%q] td:nth-child(5)`, key)) }
	b.waitFor("the expiry shown by the first load", status("expired-before")+` === "EXPIRED"`)
	require.NoError(t, held.Commit()) // the feed now delivers the old expiry
	marked := func(key string) string {
		return fmt.Sprintf(`document.querySelector('#sessions tr[data-key=%q]').classList.contains("changed")`, key)
	}

	s.MustDo(t, `mutation($id: ID!) { expireSession(input: {id: $id}) { session { id } } }`, map[string]any{"id": later}, nil)
	b.waitFor("the new expiry marked", marked("expired-after")+` && `+status("expired-after")+` === "EXPIRED"`)
	b.waitFor("the old one not", `!`+marked("expired-before"))
	require.Empty(t, b.pageErrors(), "the page logged no error")
}
