package dashboard_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"sessiongraph/ent"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
)

// BenchmarkCockpit times what an admin waits for, in Chromium, on a
// deployment of 1,000 and of 10,000 sessions: the first paint, the sessions
// list, a search by words of a message, one session's view, and a receipt
// diff. Each time is read in the page (performance.now from the document's
// navigation, for the list and the session opened as links are; from the
// click, for the search and the diff), so Chrome DevTools' round trips are not in it,
// except that a condition is looked at once per animation frame. Each
// metric is the median of b.N visits.
func BenchmarkCockpit(b *testing.B) {
	for _, sessions := range []int{1_000, 10_000} {
		b.Run(fmt.Sprintf("sessions=%d", sessions), func(b *testing.B) {
			s := apitest.New(b)
			fillSessions(b, s, sessions)
			id := seedReceipts(b, s)
			br := newBrowser(b)
			br.signIn(s.URL, s.AdminKey)
			br.waitFor("the sessions list", `document.querySelectorAll("#sessions tbody tr").length > 0`)

			var paint, list, search, view, diff []float64
			b.ResetTimer()
			for i := range b.N {
				// Each page is opened as a link is, from a blank tab: a new
				// document, whose clock starts at its navigation, with no page
				// before it still unloading (the query string makes it new).
				var first, listed float64
				br.run("a blank tab", chromedp.Navigate("about:blank"))
				br.run("open the list", chromedp.Navigate(fmt.Sprintf("%s/?visit=%d#/", s.URL, i)))
				br.run("the list's rows", chromedp.Poll(`document.querySelectorAll("#sessions tbody tr").length > 0 && performance.now()`, &listed))
				br.run("first paint", chromedp.Evaluate(`performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? 0`, &first))
				paint, list = append(paint, first), append(list, listed)

				var searched float64
				br.run("search by a word of a message", chromedp.Evaluate(`(() => {
					document.querySelector("#filter-q").value = "saffron";
					window.searchStarted = performance.now();
					document.querySelector("#search").click(); return true; })()`, nil))
				br.run("the sessions that say it", chromedp.Poll(`(() => {
					const rows = [...document.querySelectorAll("#sessions tbody tr")];
					return rows.length > 0 && rows.every(r => r.dataset.key.startsWith("dinner-")) && performance.now() - window.searchStarted; })()`, &searched))
				search = append(search, searched)

				var opened float64
				br.run("a blank tab", chromedp.Navigate("about:blank"))
				br.run("open the session", chromedp.Navigate(fmt.Sprintf("%s/?visit=%d#/sessions/%s", s.URL, i, id)))
				br.run("its turns, refs and receipts", chromedp.Poll(`document.querySelectorAll("#refs tbody tr").length === 3 &&
					document.querySelectorAll("#receipt-chart .receipt").length === 3 && performance.now()`, &opened))
				view = append(view, opened)

				var compared float64
				br.run("compare turn 1 with turn 2", chromedp.Evaluate(`(() => {
					document.querySelector("#receipt-from").selectedIndex = 0;
					document.querySelector("#receipt-to").selectedIndex = 1;
					window.diffStarted = performance.now();
					document.querySelector("#receipt-compare").click(); return true; })()`, nil))
				br.run("the diff", chromedp.Poll(`document.querySelectorAll("#receipt-diff-lines .diff-add").length > 0 &&
					performance.now() - window.diffStarted`, &compared))
				diff = append(diff, compared)
			}
			b.StopTimer()
			for _, m := range []struct {
				unit  string
				times []float64
			}{{"first-paint-ms", paint}, {"list-ms", list}, {"search-ms", search}, {"session-ms", view}, {"diff-ms", diff}} {
				b.ReportMetric(median(m.times), m.unit)
			}
			if errs := br.pageErrors(); len(errs) > 0 {
				b.Fatalf("the page logged errors: %v", errs)
			}
		})
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// fillSessions writes n sessions of three turns each straight through ent,
// as a fixture: the time is in reading them. One in a hundred has a user
// message that says "saffron", for the search.
func fillSessions(tb testing.TB, s *apitest.Server, n int) {
	tb.Helper()
	ctx := access.System(context.Background())
	const batch = 500
	now := time.Now()
	for start := 0; start < n; start += batch {
		var sessions []*ent.SessionCreate
		var turns []*ent.TurnCreate
		for i := start; i < min(start+batch, n); i++ {
			id := uuid.New()
			key, word := fmt.Sprintf("filler-%05d", i), "pasta"
			if i%100 == 0 {
				key, word = fmt.Sprintf("dinner-%05d", i), "saffron" // the key does not say it: found by the message
			}
			at := now.Add(-time.Duration(i) * time.Minute)
			sessions = append(sessions, s.Client.Session.Create().SetID(id).SetTenant(fmt.Sprintf("tenant-%d", i%7)).
				SetExternalKey(key).SetUserID(fmt.Sprintf("user-%d", i)).SetDomain("kitchen").SetCurrentTurn(3).
				SetTokenCount(120).SetTTLSeconds(86400).SetCreatedAt(at).SetLastActiveAt(at).SetExpiresAt(at.Add(24*time.Hour)))
			for t := 1; t <= 3; t++ {
				turns = append(turns, s.Client.Turn.Create().SetSessionID(id).SetNumber(t).SetStatus("COMPLETED").
					SetUserMessage(fmt.Sprintf("turn %d: something with %s for dinner", t, word)).
					SetAssistantMessage("Here are three ideas.").SetStartedAt(at).SetCompletedAt(at))
			}
		}
		require.NoError(tb, s.Client.Session.CreateBulk(sessions...).Exec(ctx))
		require.NoError(tb, s.Client.Turn.CreateBulk(turns...).Exec(ctx))
	}
	_, err := s.DB.ExecContext(ctx, `ANALYZE sessions; ANALYZE turns`)
	require.NoError(tb, err)
}
