package graphiql_test

import (
	"context"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
)

// GraphiQL renders from the binary alone: it runs a query with the API key
// the dashboard left in the tab, and the browser asks nothing of any host
// but the server.
func TestGraphiQLRendersAndRunsAQueryWithoutLeavingTheServer(t *testing.T) {
	s := apitest.New(t, func(c *app.Config) { c.Introspection = true })
	server, err := url.Parse(s.URL)
	require.NoError(t, err)

	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(apitest.Chromium(t)), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.WindowSize(1280, 800))...)
	ctx, cancelTab := chromedp.NewContext(actx)
	ctx, cancelTime := context.WithTimeout(ctx, 120*time.Second)
	t.Cleanup(func() { cancelTime(); cancelTab(); cancelAlloc() })

	var mu sync.Mutex
	var requested []string
	chromedp.ListenTarget(ctx, func(ev any) {
		if ev, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requested = append(requested, ev.Request.URL)
			mu.Unlock()
		}
	})

	var result, headers string
	var screenshot []byte
	err = chromedp.Run(ctx,
		network.Enable(),
		// Signed in to the dashboard in this tab, as an admin would be,
		// then GraphiQL opened once. (Opened twice, a first load the reload
		// cut short could store its tab with an empty query under load,
		// which the second load then showed instead of the default.)
		chromedp.Navigate(s.URL+"/favicon.ico"),
		chromedp.Evaluate(`sessionStorage.setItem('sessiongraph.apiKey', `+quote(s.Key)+`)`, nil),
		chromedp.Navigate(s.URL+"/graphiql"),
		chromedp.WaitVisible(`.graphiql-execute-button`),
		chromedp.Text(`.graphiql-editor-tool`, &headers),
		chromedp.Click(`.graphiql-execute-button`),
		// On a loaded machine the button can be visible before GraphiQL
		// listens to it, and that first click is lost: every 2 s without
		// an answer, click again (the query only reads), but only while
		// the button says Execute: while the query runs it says Stop, and
		// a click then cancelled a query slower than 2 s, every time.
		chromedp.Poll(`(() => {
			if (document.querySelector('.result-window')?.innerText.includes('"role": "ADMIN"')) return true;
			const button = document.querySelector('.graphiql-execute-button');
			if (button?.getAttribute('aria-label')?.startsWith('Execute')) button.click();
			return false;
		})()`, nil, chromedp.WithPollingInterval(2*time.Second), chromedp.WithPollingTimeout(60*time.Second)),
		chromedp.Text(`.result-window`, &result),
		chromedp.CaptureScreenshot(&screenshot),
	)
	if path := os.Getenv("GRAPHIQL_SCREENSHOT"); path != "" {
		require.NoError(t, os.WriteFile(path, screenshot, 0o644))
	}
	if err != nil {
		var shown string
		_ = chromedp.Run(ctx, chromedp.Evaluate(`JSON.stringify({
			button: document.querySelector('.graphiql-execute-button')?.getAttribute('aria-label'),
			result: document.querySelector('.result-window')?.innerText,
			editor: document.querySelector('.graphiql-query-editor')?.innerText})`, &shown))
		t.Logf("the page showed %s", shown)
	}
	require.NoError(t, err)
	assert.Contains(t, headers, "Bearer "+s.Key)
	assert.JSONEq(t, `{"data": {"viewer": {"name": "apitest admin", "role": "ADMIN", "tenant": ""}}}`, editorText(result))

	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, requested)
	for _, u := range requested {
		parsed, err := url.Parse(u)
		require.NoError(t, err)
		if parsed.Scheme == "data" || parsed.Scheme == "blob" {
			continue
		}
		assert.Equal(t, server.Host, parsed.Host, "every request goes to the server itself: %s", u)
	}
	assert.Contains(t, requested, s.URL+"/graphiql/vendor/graphiql/graphiql.min.js")
	assert.Contains(t, requested, s.URL+"/graphql", "the query went to the server")
}

// editorText is what CodeMirror shows, without its line numbers and with
// its non-breaking spaces as spaces.
func editorText(s string) string {
	var lines []string
	for _, l := range strings.Split(strings.ReplaceAll(s, "\u00a0", " "), "\n") {
		if strings.TrimSpace(l) != "" && strings.Trim(l, "0123456789 ") != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

func quote(s string) string { return `'` + strings.ReplaceAll(s, `'`, `\'`) + `'` }
