package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"time"
)

// load is one run: the server, the clients' shared settings, and the probes.
type load struct {
	opts  options
	srv   *loadServer
	probe *floorProbe
	stats *pgStats
	side  *sql.DB // the floor's and the statistics' pool, apart from the server's
	url   string
	key   string   // the admin key: seeding, and every client under -whole-replica
	keys  []string // the clients' own keys, made as phases need them
	http  *http.Client
	log   *slog.Logger
}

// Sizes of the floor measured before each phase, as in BENCHMARKS.md.
const (
	floorSelects = 300
	floorInserts = 100
	// floorUnderLoadEvery paces the floor probe that runs during the load.
	floorUnderLoadEvery = 25 * time.Millisecond
	// waitSampleEvery paces the looks at what PostgreSQL's backends wait on.
	waitSampleEvery = 20 * time.Millisecond
)

// phaseResult is what one phase measured.
type phaseResult struct {
	agents, frontends int
	window            time.Duration
	idle              floor
	ops               map[string]summary
	cpu               cpuSplit
	host              hostCPU
	db                map[string]dbUse // what ent sent during the window, by operation
	pool              sql.DBStats      // the server's pool: waits during the window, and its size
	background        int64            // sent by ent outside any request
	pg                dbCounters       // PostgreSQL's own counts during the window
	waits             waitSamples      // what its active backends waited on
	top               []topStatement
	errors            map[string]int
	firstErrors       []string
}

// requests is how many GraphQL requests the server completed in the window.
func (p phaseResult) requests() int {
	n := 0
	for op, s := range p.ops {
		if isRequest(op) {
			n += s.count
		}
	}
	return n
}

func isRequest(op string) bool {
	return op != opAgentTurn && op != opChatPair && op != opSelect1UnderLoad && op != opInsertUnderLoad
}

func (l *load) client(rec *recorder, errs *errorTally, key string) *graphqlClient {
	return &graphqlClient{url: l.url, key: key, http: l.http, rec: rec, errors: errs}
}

// clientKeys gives each of a phase's n clients an ADMIN key of its own, as
// separate agent runtimes and frontends carry: a key's in-flight limit then
// bounds one client and never refuses the load, so a row measures the
// server and not its refusals. Under -whole-replica every client shares
// the one key whose limits are the replica's.
func (l *load) clientKeys(ctx context.Context, n int) ([]string, error) {
	if l.opts.wholeReplica {
		keys := make([]string, n)
		for i := range keys {
			keys[i] = l.key
		}
		return keys, nil
	}
	for len(l.keys) < n {
		key, err := l.srv.App.CreateAPIKey(ctx, fmt.Sprintf("loadgen client %d", len(l.keys)), "ADMIN", "")
		if err != nil {
			return nil, fmt.Errorf("a client's key: %w", err)
		}
		l.keys = append(l.keys, key)
	}
	return l.keys[:n], nil
}

// seed opens sessions of five turns (begin, read, end) so that the
// frontends have full pages from the first phase on.
func (l *load) seed(ctx context.Context) error {
	errs := newErrorTally()
	c := l.client(newRecorder(), errs, l.key) // never started: nothing is recorded
	var wg sync.WaitGroup
	next := make(chan int)
	for w := range 8 {
		wg.Add(1)
		go pprof.Do(ctx, pprof.Labels("side", "client"), func(ctx context.Context) {
			defer wg.Done()
			a := &agent{c: c, rng: rand.New(rand.NewPCG(uint64(w), 1)), key: fmt.Sprintf("seed-%d", w), turns: 5}
			for range next {
				_ = a.seedSession(ctx)
			}
		})
	}
	for i := range l.opts.seedSessions {
		next <- i
	}
	close(next)
	wg.Wait()
	if counts, first := errs.take(); len(counts) > 0 {
		return fmt.Errorf("seeding failed: %v", first)
	}
	return nil
}

// phase runs agents agents and their frontends for the warm-up and the
// measured window, and collects what the window measured.
func (l *load) phase(ctx context.Context, agents int) (phaseResult, error) {
	p := phaseResult{agents: agents, frontends: (agents + l.opts.perFrontend - 1) / l.opts.perFrontend}
	if l.opts.shortTurns || l.opts.chat != "" {
		p.frontends = 0
	}
	l.log.Info("phase", "agents", agents, "frontends", p.frontends, "warmup", l.opts.warmup, "measured", l.opts.duration)
	var err error
	if p.idle, err = l.probe.measure(ctx, floorSelects, floorInserts); err != nil {
		return p, err
	}

	keys, err := l.clientKeys(ctx, agents+p.frontends)
	if err != nil {
		return p, err
	}
	rec, errs := newRecorder(), newErrorTally()
	loadCtx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	spawn := func(run func(context.Context)) {
		wg.Add(1)
		go pprof.Do(loadCtx, pprof.Labels("side", "client"), func(ctx context.Context) {
			defer wg.Done()
			run(ctx)
		})
	}
	for i := range agents {
		a := &agent{c: l.client(rec, errs, keys[i]), rng: rand.New(rand.NewPCG(uint64(agents), uint64(i))),
			key: fmt.Sprintf("agent-%dc-%d", agents, i), turns: l.opts.turns, short: l.opts.shortTurns, chat: l.opts.chat, closing: l.opts.closing}
		spawn(a.run)
	}
	for j := range p.frontends {
		f := &frontend{c: l.client(rec, errs, keys[agents+j])}
		spawn(f.run)
	}
	spawn(func(ctx context.Context) { l.probe.sampleUnderLoad(ctx, rec, floorUnderLoadEvery) })

	select {
	case <-time.After(l.opts.warmup):
	case <-ctx.Done():
		return p, ctx.Err()
	}
	errs.take() // the warm-up's errors are not the phase's
	l.stats.reset(ctx)
	pgBefore, dbBefore, bgBefore, poolBefore := l.stats.read(ctx), l.srv.dbUse(), l.srv.background.n.Load(), l.srv.App.DB.Stats()
	var profile bytes.Buffer
	if err := pprof.StartCPUProfile(&profile); err != nil {
		return p, err
	}
	hostBefore := snapshotCPU(ctx, l.side)
	cpuBefore, start := processCPU(), time.Now()
	rec.start()
	waitCtx, stopWaits := context.WithCancel(ctx)
	waits := make(chan waitSamples, 1)
	go func() { waits <- l.stats.sampleWaits(waitCtx, waitSampleEvery) }()

	select {
	case <-time.After(l.opts.duration):
	case <-ctx.Done():
		pprof.StopCPUProfile()
		stopWaits()
		return p, ctx.Err()
	}
	samples := rec.stop()
	stopWaits()
	p.waits = <-waits
	p.window = time.Since(start)
	process := processCPU() - cpuBefore
	p.host = snapshotCPU(ctx, l.side).since(hostBefore)
	pprof.StopCPUProfile()
	dbAfter, bgAfter, poolAfter := l.srv.dbUse(), l.srv.background.n.Load(), l.srv.App.DB.Stats()
	p.errors, p.firstErrors = errs.take()
	stop()
	wg.Wait()

	p.pg = l.stats.read(ctx) // after the clients stop, so that backends have published their counts
	p.pg.transactions -= pgBefore.transactions
	if p.pg.statements >= 0 {
		p.pg.statements -= pgBefore.statements
	}
	p.top = l.stats.top(ctx, 8)
	p.ops = map[string]summary{}
	for op, s := range samples {
		p.ops[op] = summarize(s)
	}
	p.db = map[string]dbUse{}
	for op, u := range dbAfter {
		p.db[op] = u.minus(dbBefore[op])
	}
	p.pool = poolAfter
	p.pool.WaitCount -= poolBefore.WaitCount
	p.pool.WaitDuration -= poolBefore.WaitDuration
	p.background = bgAfter - bgBefore
	if p.cpu, err = splitProfile(profile.Bytes(), process); err != nil {
		return p, fmt.Errorf("reading the CPU profile: %w", err)
	}
	if l.opts.cpuProfile != "" {
		if err := writeProfile(l.opts.cpuProfile, agents, profile.Bytes()); err != nil {
			return p, err
		}
	}
	return p, nil
}

// writeProfile writes a phase's profile next to path: load.pprof becomes
// load-8c.pprof for the phase of 8 agents.
func writeProfile(path string, agents int, profile []byte) error {
	ext := filepath.Ext(path)
	name := fmt.Sprintf("%s-%dc%s", strings.TrimSuffix(path, ext), agents, ext)
	return os.WriteFile(name, profile, 0o644)
}
