package dashboard_test

import (
	"encoding/json"
	"os"
	"strings"
	"sync"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// axeSource is axe-core, the accessibility engine, vendored for the tests
// only (make dashboard-vendor refreshes it; the dashboard never serves it).
var axeSource = sync.OnceValues(func() ([]byte, error) { return os.ReadFile("testdata/axe-core/axe.min.js") })

// axeViolation is one rule axe found broken, with the elements that break it.
type axeViolation struct {
	ID    string   `json:"id"`
	Help  string   `json:"help"`
	Nodes []string `json:"nodes"`
}

// requireAccessible runs axe-core on the page as it is now and fails on any
// violation, naming the rule and the elements. The source goes in through
// the DevTools protocol, which the page's Content-Security-Policy does not
// govern, so the dashboard's own headers stay as they are served.
func (b *browser) requireAccessible(what string) {
	b.t.Helper()
	src, err := axeSource()
	require.NoError(b.t, err, "read the vendored axe-core")
	awaited := func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }
	quoted, err := json.Marshal(string(src))
	require.NoError(b.t, err)
	var loaded bool
	b.run("is axe loaded", chromedp.Evaluate(`typeof axe !== "undefined"`, &loaded))
	if !loaded {
		b.run("load axe", chromedp.Evaluate(`(0, eval)(`+string(quoted)+`), true`, &loaded))
	}
	var found []axeViolation
	b.run("axe on "+what,
		chromedp.Evaluate(`axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations.map(v => ({
			id: v.id, help: v.help, nodes: v.nodes.map(n => n.target.join(" ")) })))`, &found, awaited))
	if len(found) > 0 {
		var lines []string
		for _, v := range found {
			lines = append(lines, v.ID+": "+v.Help+" — "+strings.Join(v.Nodes, ", "))
		}
		b.t.Fatalf("axe found %d violations on %s:\n%s", len(found), what, strings.Join(lines, "\n"))
	}
}
