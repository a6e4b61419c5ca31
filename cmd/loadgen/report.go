package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"time"
)

// machine is what the report says about where it ran.
type machine struct {
	cpus, maxProcs int
	goVersion      string
	postgres       string
	embedded       bool
	settings       string
}

func describeMachine(ctx context.Context, db *sql.DB, embedded bool) machine {
	m := machine{cpus: runtime.NumCPU(), maxProcs: runtime.GOMAXPROCS(0), goVersion: runtime.Version(), embedded: embedded}
	_ = db.QueryRowContext(ctx, `SELECT current_setting('server_version')`).Scan(&m.postgres)
	var sync, fsync, shared string
	_ = db.QueryRowContext(ctx, `SELECT current_setting('synchronous_commit'), current_setting('fsync'), current_setting('shared_buffers')`).
		Scan(&sync, &fsync, &shared)
	m.settings = fmt.Sprintf("synchronous_commit=%s, fsync=%s, shared_buffers=%s", sync, fsync, shared)
	return m
}

// report prints a run's phases and its ratios to the floor as Markdown.
type report struct {
	opts    options
	machine machine
	phases  []phaseResult
	elapsed time.Duration
}

func (r report) print(w io.Writer) {
	m := r.machine
	where := "the server at -database-url"
	if m.embedded {
		where = "the embedded default"
	}
	fmt.Fprintf(w, "# sessiongraph agent load\n\n")
	fmt.Fprintf(w, "%d CPUs (GOMAXPROCS %d), %s; PostgreSQL %s (%s) over TCP loopback, %s, database %s.\n",
		m.cpus, m.maxProcs, m.goVersion, m.postgres, where, m.settings, loadDatabase)
	fmt.Fprintf(w, "Server and clients share this process. Each phase: N agents (%d-turn kitchen sessions) and ceil(N/%d) frontends,\n"+
		"closed loop, %v warm-up then %v measured. Run took %v.\n", r.opts.turns, r.opts.perFrontend,
		r.opts.warmup, r.opts.duration, r.elapsed.Round(time.Second))
	fmt.Fprintf(w, "\nOperations: recordRead-20 records 20 rows with FKs; recordCreated-promote saves the recipe generated the turn before\n"+
		"(by its gen ref); context-* are builds; sessionsPage is 20 sessions with 5 turns and 10 refs each; agentTurn is, per\n"+
		"turn, beginTurn + recordRead-20 + context-THINK + endTurn (the four latencies of the same turn added up).\n")
	if r.opts.wholeReplica {
		fmt.Fprintf(w, "-whole-replica: the load's one API key may use the whole replica (its rate, in-flight, operation and pool-share limits are the replica's).\n")
	} else {
		fmt.Fprintf(w, "Each agent and each frontend carries an API key of its own, at the default per-key limits: no row counts a key's refusals.\n")
	}
	if r.opts.grown {
		fmt.Fprintf(w, "-grown: on the grown database (8,000 short sessions, 4 long ones, half a million rows, ANALYZEd) besides the run's own sessions.\n")
	}
	if r.opts.chat != "" {
		fmt.Fprintf(w, "-chat %s: each turn is a chat pair (%s), and no frontends run.\n", r.opts.chat,
			map[string]string{"exchange": "recordExchange", "two-calls": "beginTurn then endTurn"}[r.opts.chat])
	}
	if r.opts.shortTurns {
		fmt.Fprintf(w, "-short-turns: a turn is only beginTurn + recordRead-20 + endTurn, and no frontends run.\n")
	}
	for _, p := range r.phases {
		r.printPhase(w, p)
	}
	r.printSummary(w)
	r.printTargets(w)
}

func (r report) printPhase(w io.Writer, p phaseResult) {
	fmt.Fprintf(w, "\n## %d agents, %d frontends\n\n", p.agents, p.frontends)
	fmt.Fprintf(w, "Floor, idle, just before: SELECT 1 %s median, %s p99; durable insert %s median, %s p99.\n\n",
		ms(p.idle.select1.median), ms(p.idle.select1.p99), ms(p.idle.insert.median), ms(p.idle.insert.p99))
	fmt.Fprintln(w, "| operation | count | per s | median | p99 | server CPU/op | DB wait/op | statements/op | errors |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	requests := p.requests()
	var turn opCost // the agent turn's four operations, added up
	var pair opCost // a chat pair's one or two
	for _, op := range r.rows(p) {
		s := p.ops[op]
		var cost opCost
		switch {
		case isRequest(op):
			cost = p.cost(op, requests)
			switch op {
			case opBeginTurn, opRecordRead, opThink, opEndTurn:
				turn = turn.plus(cost)
			}
			switch op {
			case opBeginTurn, opEndTurn, opRecordExchange:
				pair = pair.plus(cost)
			}
		case op == opAgentTurn:
			cost = turn
		case op == opChatPair:
			cost = pair
		}
		errs := ""
		if n := p.errors[op]; n > 0 {
			errs = fmt.Sprint(n)
		}
		fmt.Fprintf(w, "| %s | %d | %.1f | %s | %s | %s | %s | %s | %s |\n", op, s.count, float64(s.count)/p.window.Seconds(),
			ms(s.median), ms(s.p99), cost.cpuText(), cost.waitText(), cost.statementsText(), errs)
	}
	fmt.Fprintf(w, "\nDB wait/op is the time a request's round trips took (pgx's tracer, from send to last answer): the network, "+
		"PostgreSQL's work, the WAL flush at COMMIT; waiting for a pool connection is not in it. The server's pool (%d connections) made %d requests wait %.1f s in all for a connection.\n",
		p.pool.MaxOpenConnections, p.pool.WaitCount, p.pool.WaitDuration.Seconds())
	c := p.cpu
	handlers := time.Duration(0)
	for _, d := range c.byOp {
		handlers += d
	}
	fmt.Fprintf(w, "\nCPU: the process used %.1f s of %.1f s (%d CPUs × %.1f s); the profile splits it: server request handlers %.0f%%, "+
		"server outside handlers (HTTP, event hub) %.0f%%, load clients %.0f%%, Go runtime (GC workers, scheduler) %.0f%%. "+
		"Server CPU/op = the op's handler samples per request + an equal share per request of the server's other samples, "+
		"runtime samples spread pro rata over server and clients, scaled to getrusage.\n",
		c.process.Seconds(), float64(r.machine.maxProcs)*p.window.Seconds(), r.machine.maxProcs, p.window.Seconds(),
		100*c.share(handlers), 100*c.share(c.serverOther), 100*c.share(c.client), 100*c.share(c.runtime))
	if h := p.host; h.known {
		available := float64(r.machine.cpus) * p.window.Seconds()
		other := h.busy - c.process - h.postgres
		fmt.Fprintf(w, "\nMachine: %.1f s of %.1f s CPU busy: this process %.1f s, the PostgreSQL backends of %s %.1f s (%s per request), "+
			"everything else %.1f s (other PostgreSQL processes such as the WAL writer, and other programs on the machine).\n",
			h.busy.Seconds(), available, c.process.Seconds(), loadDatabase, h.postgres.Seconds(),
			ms(h.postgres/time.Duration(max(requests, 1))), max(other, 0).Seconds())
	}
	var counted int64
	for op, u := range p.db {
		if isRequest(op) {
			counted += u.statements
		}
	}
	fmt.Fprintf(w, "\nStatements: the pool made %d round trips for ent (a write's batches count one each: BEGIN with the lock and its reads, the writes with COMMIT) for %d requests (%.1f each), %d outside requests; "+
		"PostgreSQL counted %d transactions in the database (pg_stat_database; the event hub's reads and the floor probe included)",
		counted, requests, float64(counted)/float64(max(requests, 1)), p.background, p.pg.transactions)
	if p.pg.statements >= 0 {
		fmt.Fprintf(w, " and %d statements (pg_stat_statements).\n", p.pg.statements)
	} else {
		fmt.Fprintf(w, "; pg_stat_statements is not loaded (shared_preload_libraries), so statements/op are the pool's round trips.\n")
	}
	if w8 := p.waits; w8.looks > 0 {
		type share struct {
			what string
			n    int
		}
		var all []share
		total := 0
		for what, n := range w8.counts {
			all = append(all, share{what, n})
			total += n
		}
		slices.SortFunc(all, func(a, b share) int { return b.n - a.n })
		var parts []string
		for _, s := range all[:min(len(all), 6)] {
			parts = append(parts, fmt.Sprintf("%s %.0f%%", s.what, 100*float64(s.n)/float64(max(total, 1))))
		}
		fmt.Fprintf(w, "\nPostgreSQL waits: %d looks at pg_stat_activity found %.1f backends busy on average (active, or idle in a transaction); "+
			"what they were waiting on: %s (CPU: on nothing, running or runnable; idle in transaction: on the server's next statement).\n",
			w8.looks, float64(total)/float64(w8.looks), strings.Join(parts, ", "))
	}
	if len(p.top) > 0 {
		fmt.Fprintln(w, "\n| statement (pg_stat_statements) | calls | total ms | ms/call |")
		fmt.Fprintln(w, "| --- | ---: | ---: | ---: |")
		for _, t := range p.top {
			fmt.Fprintf(w, "| `%s` | %d | %.0f | %.3f |\n", strings.ReplaceAll(t.query, "|", "\\|"), t.calls, t.totalMs, t.perCallMs)
		}
	}
	if len(p.firstErrors) > 0 {
		fmt.Fprintf(w, "\nErrors (first %d): %s\n", len(p.firstErrors), strings.Join(p.firstErrors, "; "))
	}
}

// rows are the phase's operations in report order, the floor probes last.
func (r report) rows(p phaseResult) []string {
	var out []string
	for _, op := range append(operationOrder, opSelect1UnderLoad, opInsertUnderLoad) {
		if _, ok := p.ops[op]; ok || p.errors[op] > 0 {
			out = append(out, op)
		}
	}
	return out
}

func (r report) printSummary(w io.Writer) {
	fmt.Fprintf(w, "\n## Median / p99 by agents\n\n| operation |")
	for _, p := range r.phases {
		fmt.Fprintf(w, " %d |", p.agents)
	}
	fmt.Fprintf(w, "\n| --- |%s\n", strings.Repeat(" ---: |", len(r.phases)))
	for _, op := range append(operationOrder, opSelect1UnderLoad, opInsertUnderLoad) {
		fmt.Fprintf(w, "| %s |", op)
		for _, p := range r.phases {
			s := p.ops[op]
			fmt.Fprintf(w, " %s / %s |", ms(s.median), ms(s.p99))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "| idle SELECT 1 |")
	for _, p := range r.phases {
		fmt.Fprintf(w, " %s / %s |", ms(p.idle.select1.median), ms(p.idle.select1.p99))
	}
	fmt.Fprintf(w, "\n| idle durable insert |")
	for _, p := range r.phases {
		fmt.Fprintf(w, " %s / %s |", ms(p.idle.insert.median), ms(p.idle.insert.p99))
	}
	fmt.Fprintln(w)
}

// target is one of the load test's acceptance ratios (docs/performance.md).
type target struct {
	name    string
	op      string
	against string // "insert" or "select1"
	limit   float64
}

var targets = []target{
	{"whole agent turn vs durable insert", opAgentTurn, "insert", 12},
	{"THINK build vs SELECT 1", opThink, "select1", 10},
	{"session-graph page vs SELECT 1", opSessionsPage, "select1", 6},
}

func (r report) printTargets(w io.Writer) {
	fmt.Fprintln(w, "\n## Targets: medians as multiples of the floor measured in the same run")
	fmt.Fprintln(w, "\nThe idle floor is measured on one connection just before each phase; the loaded floor is the same probe")
	fmt.Fprintln(w, "taken every 25 ms during the phase (the floor as the loaded machine offers it).")
	fmt.Fprintln(w, "\n| target | agents | median | idle floor | × idle | loaded floor | × loaded | limit | met (idle) |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
	for _, t := range targets {
		for _, p := range r.phases {
			idle, loaded := p.idle.select1.median, p.ops[opSelect1UnderLoad].median
			if t.against == "insert" {
				idle, loaded = p.idle.insert.median, p.ops[opInsertUnderLoad].median
			}
			med := p.ops[t.op].median
			x, xl := ratio(med, idle), ratio(med, loaded)
			met := "no"
			if x <= t.limit {
				met = "yes"
			}
			fmt.Fprintf(w, "| %s | %d | %s | %s | %.1f | %s | %.1f | %.0f× | %s |\n",
				t.name, p.agents, ms(med), ms(idle), x, ms(loaded), xl, t.limit, met)
		}
	}
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// ms formats a duration in milliseconds with three significant digits.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	switch {
	case d == 0:
		return "–"
	case v < 1:
		return fmt.Sprintf("%.3f ms", v)
	case v < 10:
		return fmt.Sprintf("%.2f ms", v)
	case v < 100:
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.0f ms", v)
}

// opCost is what one request of an operation cost the server, on average.
type opCost struct {
	known      bool
	cpu        time.Duration
	wait       time.Duration
	statements float64
}

// cost is the server's CPU, DB wait and statements per request of op.
func (p phaseResult) cost(op string, requests int) opCost {
	n := p.ops[op].count
	if n == 0 {
		return opCost{}
	}
	u := p.db[op]
	return opCost{known: true, cpu: p.cpu.perOperation(op, n, requests),
		wait: u.wait / time.Duration(n), statements: float64(u.statements) / float64(n)}
}

func (c opCost) plus(d opCost) opCost {
	return opCost{known: c.known || d.known, cpu: c.cpu + d.cpu, wait: c.wait + d.wait, statements: c.statements + d.statements}
}

func (c opCost) cpuText() string  { return c.text(ms(c.cpu)) }
func (c opCost) waitText() string { return c.text(ms(c.wait)) }
func (c opCost) statementsText() string {
	return c.text(fmt.Sprintf("%.1f", c.statements))
}

func (c opCost) text(s string) string {
	if !c.known {
		return ""
	}
	return s
}
