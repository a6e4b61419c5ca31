package app_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
)

func corsRequest(t *testing.T, s *apitest.Server, method, origin string, header map[string]string) *http.Response {
	t.Helper()
	var body *strings.Reader
	if method == http.MethodPost {
		body = strings.NewReader(`{"query":"{ viewer { role } }"}`)
	} else {
		body = strings.NewReader("")
	}
	req, err := http.NewRequest(method, s.URL+"/graphql", body)
	require.NoError(t, err)
	req.Header.Set("Origin", origin)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	return res
}

// Preflights from the -allowed-origins are answered with what a browser
// needs to send the request; the answers to those origins say they may be
// read; any other origin gets no CORS header at all.
func TestCORSAnswersTheAllowedOriginsOnly(t *testing.T) {
	s := apitest.New(t, func(c *app.Config) { c.AllowedOrigins = []string{"app.example.com", "*.example.org:8443"} })
	preflight := map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type"}
	for _, origin := range []string{"https://app.example.com", "https://a.example.org:8443"} {
		res := corsRequest(t, s, http.MethodOptions, origin, preflight)
		assert.Equal(t, http.StatusNoContent, res.StatusCode, origin)
		assert.Equal(t, origin, res.Header.Get("Access-Control-Allow-Origin"))
		assert.Equal(t, "GET, POST, OPTIONS", res.Header.Get("Access-Control-Allow-Methods"))
		assert.Contains(t, res.Header.Get("Access-Control-Allow-Headers"), "Authorization, Content-Type")
		assert.Equal(t, "600", res.Header.Get("Access-Control-Max-Age"))
		assert.Empty(t, res.Header.Get("Access-Control-Allow-Credentials"))

		res = corsRequest(t, s, http.MethodPost, origin, map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + s.AdminKey})
		assert.Equal(t, http.StatusOK, res.StatusCode)
		assert.Equal(t, origin, res.Header.Get("Access-Control-Allow-Origin"))
		assert.Contains(t, res.Header.Values("Vary"), "Origin")
		res = corsRequest(t, s, http.MethodPost, origin, map[string]string{"Content-Type": "application/json"})
		assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
		assert.Equal(t, origin, res.Header.Get("Access-Control-Allow-Origin"), "the page can read why it was refused")
	}
	for _, origin := range []string{"https://evil.example", "https://app.example.com.evil.example", "https://a.example.org", "null"} {
		res := corsRequest(t, s, http.MethodOptions, origin, preflight)
		assert.Equal(t, http.StatusForbidden, res.StatusCode, origin)
		res2 := corsRequest(t, s, http.MethodPost, origin, map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + s.AdminKey})
		for _, r := range []*http.Response{res, res2} {
			for name := range r.Header {
				assert.False(t, strings.HasPrefix(name, "Access-Control-"), "%s: %s", origin, name)
			}
		}
	}
}

// In Chromium, a page on another origin (localhost, the API on 127.0.0.1)
// calls the API with its key when that origin is allowed, and is kept from
// it when not.
func TestAFrontendOnAnAllowedOriginCallsTheAPIFromChromium(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>frontend</title>`)
	}))
	t.Cleanup(page.Close)
	frontend := strings.Replace(page.URL, "127.0.0.1", "localhost", 1)

	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(apitest.Chromium(t)), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true))...)
	t.Cleanup(cancelAlloc)
	for _, c := range []struct {
		allowed []string
		want    string
	}{
		{[]string{"localhost:*"}, "ADMIN"},
		{[]string{"elsewhere.example"}, "blocked"},
	} {
		s := apitest.New(t, func(cfg *app.Config) { cfg.AllowedOrigins = c.allowed })
		ctx, cancelTab := chromedp.NewContext(actx)
		ctx, cancelTime := context.WithTimeout(ctx, 40*time.Second)
		var got string
		err := chromedp.Run(ctx,
			chromedp.Navigate(frontend),
			chromedp.Evaluate(fmt.Sprintf(`fetch(%q, {method: 'POST', headers: {'Content-Type': 'application/json', 'Authorization': 'Bearer %s'},
				body: JSON.stringify({query: '{ viewer { role } }'})}).then(r => r.json()).then(j => j.data.viewer.role, () => 'blocked')`,
				s.URL+"/graphql", s.AdminKey), &got, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }),
		)
		cancelTime()
		cancelTab()
		require.NoError(t, err)
		assert.Equal(t, c.want, got, c.allowed)
	}
}
