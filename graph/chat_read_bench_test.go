package graph_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"sessiongraph/internal/apitest"
)

// chatRead is what a chat-only client asks before each model call: the
// session's MESSAGES build, the system prompt and the turns as messages.
const chatRead = `query ChatRead($id: ID!, $options: ContextOptions) {
  session(id: $id) { context(node: MESSAGES, options: $options) {
    tokenCount messages { role content tokenCount }
  } }
}`

// chatReadClients is how many chat clients read at once, each its own
// session.
const chatReadClients = 8

// chatReadExchanges is how many exchanges each chat session holds: 40
// messages, all of them within the model's window.
const chatReadExchanges = 20

// BenchmarkChatRead serves the chat read to 8 clients at once, each on its
// own chat session of 20 exchanges recorded through the API. "made" gives
// each read a token budget of its own, so that none is a build the server
// remembers (what a read after an exchange costs); "remembered" asks the
// same build again of an unchanged session. Allocations per read count the
// whole request through the HTTP handler, the test client's JSON included.
func BenchmarkChatRead(b *testing.B) {
	s := apitest.New(b)
	h := handlerClient{s: s}
	ids := make([]string, chatReadClients)
	for i := range ids {
		var out struct {
			OpenSession struct{ Session struct{ ID string } } `json:"openSession"`
		}
		s.MustDo(b, `mutation($k: String!) { openSession(input: {tenant: "acme", externalKey: $k,
			systemPrompt: "You are a cooking assistant. Answer briefly and name the recipes you suggest."}) { session { id } } }`,
			map[string]any{"k": fmt.Sprintf("chat-%d", i)}, &out)
		ids[i] = out.OpenSession.Session.ID
		for n := range chatReadExchanges {
			h.post(b, recordExchange, map[string]any{"id": ids[i],
				"u": fmt.Sprintf("Exchange %d: what could I cook tonight with leeks, rice and a little cream?", n+1),
				"a": "A leek risotto: soften the leeks in butter, toast the rice, add stock a ladle at a time, finish with the cream."})
		}
	}
	for _, made := range []bool{true, false} {
		name := map[bool]string{true: "made", false: "remembered"}[made]
		b.Run(name, func(b *testing.B) {
			var budget atomic.Int64
			budget.Store(100_000)
			read := func(i int) {
				vars := map[string]any{"id": ids[i]}
				if made {
					vars["options"] = map[string]any{"tokenBudget": budget.Add(1)}
				}
				h.post(b, chatRead, vars)
			}
			for i := range ids {
				read(i) // warm the query cache
			}
			var next atomic.Int64
			var wg sync.WaitGroup
			m := startMeter(s)
			start := time.Now()
			b.ResetTimer()
			for i := range chatReadClients {
				wg.Go(func() {
					for next.Add(1) <= int64(b.N) {
						read(i)
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			wall := time.Since(start)
			m.report(b, b.N, 1, "read")
			b.ReportMetric(float64(b.N)/wall.Seconds(), "reads/s")
			b.ReportMetric(float64(m.statements)/float64(b.N), "statements/read")
		})
	}
}
