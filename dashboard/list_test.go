package dashboard_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
)

// waitWithin waits until a condition holds, failing after limit: for what
// must happen fast, not merely eventually.
func (b *browser) waitWithin(what, condition string, limit time.Duration) {
	b.t.Helper()
	b.run("wait for "+what, chromedp.Poll(condition, nil, chromedp.WithPollingTimeout(limit)))
}

// openList signs in with key and waits for n rows and live updates.
func openList(t *testing.T, s *apitest.Server, key string, n int) *browser {
	t.Helper()
	b := newBrowser(t)
	b.signIn(s.URL, key)
	b.waitFor("the sessions list", fmt.Sprintf(`document.querySelectorAll("#sessions tbody tr").length === %d`, n))
	b.waitFor("live updates", `document.querySelector("#live").dataset.state === "live"`)
	return b
}

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

	started := time.Now()
	r.begin("what can I cook tonight?")
	r.end("Rice with what is left.", nil)
	b.waitWithin("the new turn count", turns("busy")+` === "1"`, 3*time.Second)
	b.waitWithin("the row marked", textOf(`#sessions tr[data-key="busy"] .change-tag`)+` === "turn ended"`, 3*time.Second)
	require.Less(t, time.Since(started), 5*time.Second, "the feed, not a poll, brought it")
	b.waitFor("the other row unchanged", turns("quiet")+` === "0" && !document.querySelector('#sessions tr[data-key="quiet"]').classList.contains("changed")`)

	// A burst of turns on two sessions settles on the last counts.
	q := &agent{t: t, s: s, id: other}
	for i := range 5 {
		r.begin(fmt.Sprint("again ", i))
		r.end("ok", nil)
		q.begin(fmt.Sprint("me too ", i))
		q.end("ok", nil)
	}
	b.waitWithin("the counts after the burst", turns("busy")+` === "6" && `+turns("quiet")+` === "5"`, 5*time.Second)
	require.Empty(t, b.pageErrors(), "the page logged no error")
}

