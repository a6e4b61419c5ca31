package graph_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
	"sessiongraph/internal/config"
)

// BenchmarkVictimUnderFlood measures what a flood from one key does to
// another tenant: a victim CLIENT key of tenant globex alternates a write
// (updateSession) and a read of its session, one at a time, b.N
// operations idle and b.N while 16 goroutines of one READER key of tenant
// acme send dashboard searches (ContainsFold over sessions and their
// turns) as fast as they are answered, 429s included: nothing in the
// benchmark slows them. Idle and flood alternate in ten rounds, so that
// the rest of a shared machine weighs on both alike. The server runs with
// the default fairness settings (config.Defaults). It reports the
// victim's median and p99 in both phases, the p99 ratio (target: within
// 2x), the victim's failed operations (target: none), and the flood's
// searches answered and refused a second.
func BenchmarkVictimUnderFlood(b *testing.B) {
	s := apitest.New(b, func(c *app.Config) { c.Fairness = config.Defaults().Fairness })
	victim := s.WithKey(s.NewKey(b, "CLIENT", "globex"))
	var opened struct {
		OpenSession struct{ Session struct{ ID string } }
	}
	victim.MustDo(b, `mutation { openSession(input: {tenant: "globex", externalKey: "victim"}) { session { id } } }`, nil, &opened)
	id := opened.OpenSession.Session.ID
	for i := range 200 {
		s.MustDo(b, `mutation($k: String!) { openSession(input: {tenant: "acme", externalKey: $k, userID: "someone"}) { session { id } } }`,
			map[string]any{"k": fmt.Sprintf("acme-conversation-%d", i)}, nil)
	}
	write := `mutation($id: ID!, $h: String!) { updateSession(input: {id: $id, historySummary: $h}) { session { id } } }`
	read := `query($id: ID!) { session(id: $id) { id historySummary turns(first: 5) { totalCount } } }`
	measure := func(n int) (times []time.Duration, failed int) {
		for i := range n {
			start := time.Now()
			var res *apitest.Response
			if i%2 == 0 {
				res = victim.Do(b, write, map[string]any{"id": id, "h": fmt.Sprint("summary ", i)})
			} else {
				res = victim.Do(b, read, map[string]any{"id": id})
			}
			times = append(times, time.Since(start))
			if len(res.Errors) > 0 {
				failed++
			}
		}
		return times, failed
	}

	flood := s.WithKey(s.NewKey(b, "READER", "acme"))
	search := `{ sessions(first: 20, where: {or: [{externalKeyContainsFold: "conversation-1"}, {userIDContainsFold: "some"},
		{hasTurnsWith: [{or: [{userMessageContainsFold: "butter"}, {assistantMessageContainsFold: "butter"}]}]}]}) { totalCount edges { node { id externalKey } } } }`
	var sent, limited atomic.Int64
	var floodTime time.Duration
	// startFlood sends searches from 16 goroutines until the returned
	// function is called.
	startFlood := func() func() {
		ctx, stop := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				for ctx.Err() == nil {
					res := flood.Do(b, search, nil)
					sent.Add(1)
					if res.Status == 429 {
						limited.Add(1)
					}
				}
			})
		}
		start := time.Now()
		return func() {
			floodTime += time.Since(start)
			stop()
			wg.Wait()
		}
	}

	// The machine is shared: idle and flood alternate in rounds, so that
	// what else runs on it weighs on both alike.
	const rounds = 10
	var idle, under []time.Duration
	var failed int
	b.ResetTimer()
	for range rounds {
		times, f := measure(max(1, b.N/rounds))
		idle, failed = append(idle, times...), failed+f
		stop := startFlood()
		times, f = measure(max(1, b.N/rounds))
		stop()
		under, failed = append(under, times...), failed+f
	}
	b.StopTimer()

	p := func(ts []time.Duration, q float64) float64 {
		ts = slices.Clone(ts)
		slices.Sort(ts)
		return float64(ts[min(len(ts)-1, int(q*float64(len(ts))))].Microseconds()) / 1000
	}
	b.ReportMetric(p(idle, 0.5), "idle-median-ms")
	b.ReportMetric(p(idle, 0.99), "idle-p99-ms")
	b.ReportMetric(p(under, 0.5), "flood-median-ms")
	b.ReportMetric(p(under, 0.99), "flood-p99-ms")
	b.ReportMetric(p(under, 0.99)/p(idle, 0.99), "x-idle-p99")
	b.ReportMetric(float64(failed), "victim-failed")
	b.ReportMetric(float64(sent.Load()-limited.Load())/floodTime.Seconds(), "flood-admitted/s")
	b.ReportMetric(float64(limited.Load())/floodTime.Seconds(), "flood-429/s")
}

// BenchmarkOneKeyAlone measures what the fairness settings cost a key
// that has the replica to itself, as an agent runtime's key usually has:
// one CLIENT key runs 16 conversations at once, each alternating a write
// (updateSession) and a read of its session, b.N operations in all, with
// the default settings, then with the rates lifted (what is left is the
// slots' and pool shares' cost). It reports the operations a second and
// their median and p99.
func BenchmarkOneKeyAlone(b *testing.B) {
	b.Run("defaults", func(b *testing.B) { oneKeyAlone(b, false) })
	b.Run("rates-lifted", func(b *testing.B) { oneKeyAlone(b, true) })
}

func oneKeyAlone(b *testing.B, liftRates bool) {
	s := apitest.New(b, func(c *app.Config) {
		c.Fairness = config.Defaults().Fairness
		if liftRates {
			c.Fairness.KeyRate, c.Fairness.KeyBurst = 1<<20, 1<<20
			c.Fairness.TenantRate, c.Fairness.TenantBurst = 1<<20, 1<<20
		}
	})
	runtime := s.WithKey(s.NewKey(b, "CLIENT", "globex"))
	const conversations = 16
	ids := make([]string, conversations)
	for i := range ids {
		var opened struct {
			OpenSession struct{ Session struct{ ID string } }
		}
		runtime.MustDo(b, `mutation($k: String!) { openSession(input: {tenant: "globex", externalKey: $k}) { session { id } } }`,
			map[string]any{"k": fmt.Sprint("conversation-", i)}, &opened)
		ids[i] = opened.OpenSession.Session.ID
	}
	write := `mutation($id: ID!, $h: String!) { updateSession(input: {id: $id, historySummary: $h}) { session { id } } }`
	read := `query($id: ID!) { session(id: $id) { id historySummary turns(first: 5) { totalCount } } }`
	var next atomic.Int64
	times := make([][]time.Duration, conversations)
	var failed atomic.Int64
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for c := range conversations {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				t0 := time.Now()
				var res *apitest.Response
				if i%2 == 0 {
					res = runtime.Do(b, write, map[string]any{"id": ids[c], "h": fmt.Sprint("summary ", i)})
				} else {
					res = runtime.Do(b, read, map[string]any{"id": ids[c]})
				}
				times[c] = append(times[c], time.Since(t0))
				if len(res.Errors) > 0 {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	all := slices.Concat(times...)
	slices.Sort(all)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "ops/s")
	b.ReportMetric(float64(all[len(all)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(all[min(len(all)-1, len(all)*99/100)].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(failed.Load()), "failed")
}

// BenchmarkARefusal measures what a request refused 429 RATE_LIMITED
// costs, against the same request admitted ({ viewer { role } }, which
// reads nothing from the database): CPU time of the whole process (the
// server and the client sending, one request at a time) per request.
func BenchmarkARefusal(b *testing.B) {
	for _, refused := range []bool{false, true} {
		b.Run(map[bool]string{false: "admitted", true: "refused"}[refused], func(b *testing.B) {
			s := apitest.New(b, func(c *app.Config) {
				c.Fairness = config.Defaults().Fairness
				if refused {
					c.Fairness.KeyRate, c.Fairness.KeyBurst = 1, 1
				} else {
					c.Fairness.KeyRate, c.Fairness.KeyBurst = 1<<20, 1<<20
					c.Fairness.TenantRate, c.Fairness.TenantBurst = 1<<20, 1<<20
				}
			})
			key := s.WithKey(s.NewKey(b, "READER", "acme"))
			key.Do(b, `{ viewer { role } }`, nil) // the key is cached, the burst spent
			want := map[bool]int{false: 200, true: 429}[refused]
			before := cpuTime()
			b.ResetTimer()
			for range b.N {
				if res := key.Do(b, `{ viewer { role } }`, nil); res.Status != want {
					b.Fatalf("status %d, want %d", res.Status, want)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-before).Microseconds())/float64(b.N), "cpu-µs/req")
		})
	}
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime() time.Duration {
	var u syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
