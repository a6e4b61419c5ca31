package graph_test

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"entgo.io/ent/dialect"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
	"sessiongraph/internal/config"
	"sessiongraph/internal/dbhook"
)

// BenchmarkVictimUnderFlood measures what a flood from one key does to
// another tenant: a victim CLIENT key of tenant globex alternates a write
// (updateSession) and a read of its session, one at a time, b.N
// operations idle and b.N while 16 clients of one READER key of tenant
// acme send dashboard searches (ContainsFold over sessions and their
// turns) as fast as they are answered, 429s included: nothing in the
// benchmark slows them. Idle and flood alternate in ten rounds, so that
// the rest of a shared machine weighs on both alike. The server runs with
// the default fairness settings (config.Defaults).
//
// "other-process" runs the flood's clients in a child process (this test
// binary again, see runFloodProcess), as another tenant's clients are: on
// other hosts, never in the server's process, so neither their goroutines
// nor their garbage weigh on the server's scheduler and collector. It
// still shares this machine's cores, as the server's PostgreSQL does.
// "same-process" runs them as goroutines beside the server and the victim,
// as the benchmark first did.
//
// It reports the victim's median and p99 in both phases, the p99 ratio
// (target: within 2x), the victim's failed operations (target: none), the
// flood's searches answered and refused a second, and, to say where the
// victim's tail comes from: the server process's garbage collections a
// second in each phase, the share of the victim's slowest 1% of
// operations under the flood during which a collection ran, and the 99th
// percentile of the server's goroutines' wait for a thread
// (/sched/latencies) in each phase.
func BenchmarkVictimUnderFlood(b *testing.B) {
	b.Run("other-process", func(b *testing.B) { victimUnderFlood(b, true) })
	b.Run("same-process", func(b *testing.B) { victimUnderFlood(b, false) })
}

// floodSearch is the flood's dashboard search.
const floodSearch = `{ sessions(first: 20, where: {or: [{externalKeyContainsFold: "conversation-1"}, {userIDContainsFold: "some"},
	{hasTurnsWith: [{or: [{userMessageContainsFold: "butter"}, {assistantMessageContainsFold: "butter"}]}]}]}) { totalCount edges { node { id externalKey } } } }`

// floodClients is how many clients the flood runs.
const floodClients = 16

// floodProcessEnv carries the URL a flood process sends to; SG_FLOOD_KEY
// its key.
const floodProcessEnv = "SG_FLOOD_URL"

// phases holds, by request id, the time each of the victim's requests
// spent in the database: [0] BEGIN (with the wait for a connection), [1]
// its statements, [2] COMMIT.
var phases sync.Map

func victimUnderFlood(b *testing.B, otherProcess bool) {
	s := apitest.New(b, func(c *app.Config) {
		c.Fairness = config.Defaults().Fairness
		wrap := c.WrapDriver
		c.WrapDriver = func(d dialect.Driver) dialect.Driver {
			return dbhook.Wrap(wrap(d), func(ctx context.Context, kind dbhook.Kind, q string, run func(context.Context) error) error {
				if p, ok := access.FromContext(ctx); !ok || p.Tenant != "globex" {
					return run(ctx) // only the victim's are timed
				}
				t := time.Now()
				err := run(ctx)
				e := time.Since(t)
				v, _ := phases.LoadOrStore(app.RequestID(ctx), new([3]atomic.Int64))
				i := map[dbhook.Kind]int{dbhook.Begin: 0, dbhook.Commit: 2}[kind]
				if kind == dbhook.Exec || kind == dbhook.Query {
					i = 1
				}
				v.(*[3]atomic.Int64)[i].Add(int64(e))
				return err
			})
		}
	})
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
	type op struct {
		took time.Duration
		gc   bool // the collector paused or was marking while it ran
		kind int  // 0 a write, 1 a read
		id   string
	}
	measure := func(n int) (ops []op, failed int) {
		for i := range n {
			pauses := gcPauses()
			start := time.Now()
			var res *apitest.Response
			if i%2 == 0 {
				res = victim.Do(b, write, map[string]any{"id": id, "h": fmt.Sprint("summary ", i)})
			} else {
				res = victim.Do(b, read, map[string]any{"id": id})
			}
			after := gcPauses()
			ops = append(ops, op{time.Since(start), after != pauses || pauses%2 == 1, i % 2, res.Header.Get("X-Request-Id")})
			if len(res.Errors) > 0 {
				failed++
			}
		}
		return ops, failed
	}

	floodKey := s.NewKey(b, "READER", "acme")
	flood := s.WithKey(floodKey)
	var sent, limited atomic.Int64
	var floodTime time.Duration
	// startFlood sends searches from the flood's clients until the
	// returned function is called.
	startFlood := func() func() {
		if otherProcess {
			return startFloodProcess(b, s.URL, floodKey, &sent, &limited, &floodTime)
		}
		ctx, stop := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for range floodClients {
			wg.Go(func() {
				for ctx.Err() == nil {
					res := flood.Do(b, floodSearch, nil)
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
	var idle, under []op
	var failed int
	var idleTime time.Duration
	var idleGC, floodGC uint64
	idleSched, floodSched := schedLatencies(), schedLatencies()
	// The WAL written in each phase: what the victim's commits flush, and
	// whether the flood's searches (which write no rows) add to it.
	pg, err := sql.Open("pgx", s.DSN)
	require.NoError(b, err)
	defer pg.Close()
	lsn := func() (n int64) {
		require.NoError(b, pg.QueryRow(`SELECT pg_current_wal_lsn() - '0/0'`).Scan(&n))
		return n
	}
	var idleWAL, floodWAL int64
	b.ResetTimer()
	for range rounds {
		c0, s0, t0, w0 := gcCycles(), schedLatencies(), time.Now(), lsn()
		ops, f := measure(max(1, b.N/rounds))
		idleTime += time.Since(t0)
		idleWAL += lsn() - w0
		idleGC += gcCycles() - c0
		idleSched.add(schedLatencies(), s0)
		idle, failed = append(idle, ops...), failed+f
		stop := startFlood()
		c0, s0, w0 = gcCycles(), schedLatencies(), lsn()
		ops, f = measure(max(1, b.N/rounds))
		floodWAL += lsn() - w0
		floodGC += gcCycles() - c0
		floodSched.add(schedLatencies(), s0)
		stop()
		under, failed = append(under, ops...), failed+f
	}
	b.StopTimer()

	took := func(ops []op) []time.Duration {
		ts := make([]time.Duration, len(ops))
		for i, o := range ops {
			ts[i] = o.took
		}
		slices.Sort(ts)
		return ts
	}
	p := func(ts []time.Duration, q float64) float64 {
		return float64(ts[min(len(ts)-1, int(q*float64(len(ts))))].Microseconds()) / 1000
	}
	idleTs, underTs := took(idle), took(under)
	b.ReportMetric(p(idleTs, 0.5), "idle-median-ms")
	b.ReportMetric(p(idleTs, 0.99), "idle-p99-ms")
	b.ReportMetric(p(underTs, 0.5), "flood-median-ms")
	b.ReportMetric(p(underTs, 0.99), "flood-p99-ms")
	b.ReportMetric(p(underTs, 0.99)/p(idleTs, 0.99), "x-idle-p99")
	b.ReportMetric(float64(failed), "victim-failed")
	b.ReportMetric(float64(sent.Load()-limited.Load())/floodTime.Seconds(), "flood-admitted/s")
	b.ReportMetric(float64(limited.Load())/floodTime.Seconds(), "flood-429/s")
	b.ReportMetric(float64(idleWAL)/float64(len(idle)), "idle-wal-B/op")
	b.ReportMetric(float64(floodWAL)/float64(len(under)), "flood-wal-B/op")
	b.ReportMetric(float64(idleGC)/idleTime.Seconds(), "idle-gc/s")
	b.ReportMetric(float64(floodGC)/floodTime.Seconds(), "flood-gc/s")
	slowest := slices.Clone(under)
	slices.SortFunc(slowest, func(a, b op) int { return cmp.Compare(b.took, a.took) })
	slowest = slowest[:max(1, len(slowest)/100)]
	withGC, writes := 0, 0
	for _, o := range slowest {
		if o.gc {
			withGC++
		}
		if o.kind == 0 {
			writes++
		}
	}
	b.ReportMetric(100*float64(writes)/float64(len(slowest)), "flood-slowest1%-writes-%")
	// Where the slowest 1% spent their time: in the database (waiting
	// for a connection and BEGIN, the statements, COMMIT), or elsewhere
	// (HTTP, the slot, the server's Go code, the collector).
	split := func(ops []op) (db, rest float64) {
		var inDB, all time.Duration
		for _, o := range ops {
			if v, ok := phases.Load(o.id); ok {
				for i := range 3 {
					inDB += time.Duration(v.(*[3]atomic.Int64)[i].Load())
				}
			}
			all += o.took
		}
		n := float64(len(ops)) * float64(time.Millisecond)
		return float64(inDB) / n, float64(all-inDB) / n
	}
	slowIdle := slices.Clone(idle)
	slices.SortFunc(slowIdle, func(a, b op) int { return cmp.Compare(b.took, a.took) })
	db, rest := split(slowIdle[:len(slowest)])
	b.ReportMetric(db, "idle-slowest1%-db-ms")
	b.ReportMetric(rest, "idle-slowest1%-rest-ms")
	db, rest = split(slowest)
	b.ReportMetric(db, "flood-slowest1%-db-ms")
	b.ReportMetric(rest, "flood-slowest1%-rest-ms")
	if os.Getenv("SG_FLOOD_SLOWEST") != "" {
		for _, o := range slowest {
			v, _ := phases.Load(o.id)
			ph, _ := v.(*[3]atomic.Int64)
			if ph == nil {
				ph = new([3]atomic.Int64)
			}
			b.Logf("slow victim op: %v write=%v collector=%v begin %v statements %v commit %v", o.took, o.kind == 0, o.gc,
				time.Duration(ph[0].Load()), time.Duration(ph[1].Load()), time.Duration(ph[2].Load()))
		}
	}
	withGC = 0
	for _, o := range under {
		if o.gc {
			withGC++
		}
	}
	b.ReportMetric(100*float64(withGC)/float64(len(under)), "flood-all-in-gc-%")
	b.ReportMetric(idleSched.quantile(0.99)*1000, "idle-sched-p99-ms")
	b.ReportMetric(floodSched.quantile(0.99)*1000, "flood-sched-p99-ms")
}

// startFloodProcess starts the flood in a child process and returns the
// function that stops it, adding what it sent to sent and limited and the
// time it flooded to floodTime.
func startFloodProcess(b *testing.B, url, key string, sent, limited *atomic.Int64, floodTime *time.Duration) func() {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), floodProcessEnv+"="+url, "SG_FLOOD_KEY="+key)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(b, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(b, err)
	require.NoError(b, cmd.Start())
	lines := bufio.NewScanner(stdout)
	require.True(b, lines.Scan(), "the flood process did not start")
	require.Equal(b, "flooding", lines.Text())
	start := time.Now()
	return func() {
		*floodTime += time.Since(start)
		stdin.Close() // the child stops when its stdin closes
		require.True(b, lines.Scan(), "the flood process did not report")
		var n, refused int64
		_, err := fmt.Sscan(lines.Text(), &n, &refused)
		require.NoError(b, err)
		sent.Add(n)
		limited.Add(refused)
		require.NoError(b, cmd.Wait())
	}
}

// runFloodProcess is the flood's child process: floodClients clients send
// floodSearch to SG_FLOOD_URL with SG_FLOOD_KEY, each again as soon as it
// is answered, from when it prints "flooding" until its stdin closes; then
// it prints how many it sent and how many were refused 429. Each client
// keeps its connection, as an HTTP client's pool does. SG_FLOOD_CLIENTS
// and SG_FLOOD_GAP (a pause before each request) change the flood, to see
// how the victim's tail follows the flood's pace.
func runFloodProcess() int {
	body, _ := json.Marshal(map[string]any{"query": floodSearch})
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: floodClients}}
	url, key := os.Getenv(floodProcessEnv)+"/graphql", os.Getenv("SG_FLOOD_KEY")
	ctx, stop := context.WithCancel(context.Background())
	var sent, limited atomic.Int64
	var wg sync.WaitGroup
	clients, gap := floodClients, time.Duration(0)
	if c := os.Getenv("SG_FLOOD_CLIENTS"); c != "" {
		fmt.Sscan(c, &clients)
	}
	if g := os.Getenv("SG_FLOOD_GAP"); g != "" {
		gap, _ = time.ParseDuration(g)
	}
	for range clients {
		wg.Go(func() {
			for ctx.Err() == nil {
				if gap > 0 {
					time.Sleep(gap)
				}
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+key)
				res, err := client.Do(req)
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					fmt.Fprintln(os.Stderr, "flood:", err)
					os.Exit(1)
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				sent.Add(1)
				if res.StatusCode == http.StatusTooManyRequests {
					limited.Add(1)
				}
			}
		})
	}
	fmt.Println("flooding")
	_, _ = io.Copy(io.Discard, os.Stdin)
	stop()
	wg.Wait()
	fmt.Println(sent.Load(), limited.Load())
	return 0
}

// gcCycles is how many collections this process has completed.
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// gcPauses is how many stop-the-world pauses of the collector this
// process has had: two a cycle, one as marking starts and one as it ends,
// so an odd count means a cycle is marking.
func gcPauses() uint64 {
	s := []metrics.Sample{{Name: "/sched/pauses/total/gc:seconds"}}
	metrics.Read(s)
	var n uint64
	for _, c := range s[0].Value.Float64Histogram().Counts {
		n += c
	}
	return n
}

// latencies is a histogram of /sched/latencies:seconds.
type latencies struct {
	counts  []uint64
	buckets []float64
}

func schedLatencies() latencies {
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(s)
	h := s[0].Value.Float64Histogram()
	return latencies{slices.Clone(h.Counts), h.Buckets}
}

// add adds to l what was counted between before and after.
func (l *latencies) add(after, before latencies) {
	for i := range l.counts {
		l.counts[i] += after.counts[i] - before.counts[i]
	}
}

func (l latencies) quantile(q float64) float64 {
	var total uint64
	for _, c := range l.counts {
		total += c
	}
	if total == 0 {
		return 0
	}
	want := uint64(q * float64(total))
	var seen uint64
	for i, c := range l.counts {
		seen += c
		if seen > want {
			return l.buckets[i+1]
		}
	}
	return l.buckets[len(l.buckets)-1]
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
