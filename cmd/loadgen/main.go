// Command loadgen puts a realistic agent load on sessiongraph and measures
// it against the floor of its database (run by `make load`).
//
// It serves sessiongraph in this process on a loopback port, on a fresh
// database of the embedded default PostgreSQL, and drives it over HTTP
// through the public GraphQL API: N agents run multi-turn kitchen sessions
// while N/4 frontends page the session graph. Each client count is its own
// phase; each phase prints latency percentiles, throughput, the server's CPU
// time and the statements each operation costs, next to a bare SELECT 1 and
// a single-row durable insert measured in the same run.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"sessiongraph/internal/grown"
)

type options struct {
	clients      []int
	perFrontend  int
	warmup       time.Duration
	duration     time.Duration
	turns        int
	seedSessions int
	cpuProfile   string
	databaseURL  string
	dataDir      string
	showSQL      []string
	shortTurns   bool
	grown        bool
	chat         string
	closing      bool
	wholeReplica bool
}

func main() {
	opts, err := parseOptions(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, opts, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

func parseOptions(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("loadgen", flag.ExitOnError)
	clients := fs.String("clients", "1,8,32", "agent counts, one phase each")
	fs.IntVar(&o.perFrontend, "agents-per-frontend", 4, "one frontend paging sessions per this many agents, rounded up")
	fs.DurationVar(&o.warmup, "warmup", 2*time.Second, "load before each phase's measurement starts")
	fs.DurationVar(&o.duration, "duration", 12*time.Second, "how long each phase is measured")
	fs.IntVar(&o.turns, "turns", 6, "turns per agent session")
	fs.IntVar(&o.seedSessions, "seed-sessions", 40, "sessions of 5 turns opened before the first phase, for the frontends to page")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write each phase's CPU profile to this path, with -<clients>c before the extension")
	fs.StringVar(&o.databaseURL, "database-url", os.Getenv("DATABASE_URL"), "a PostgreSQL server to create the run's database on; empty uses the embedded default (DATABASE_URL)")
	fs.StringVar(&o.dataDir, "data-dir", envOr("DATA_DIR", ".data/postgres"), "where the embedded default keeps its private cluster (DATA_DIR)")
	fs.BoolVar(&o.shortTurns, "short-turns", false, "a turn is only beginTurn, recordRead-20 and endTurn (the read as endTurn's closing write unless -closing=false), and no frontends run (the shortest agent turn)")
	fs.BoolVar(&o.grown, "grown", false, "load the grown database (internal/grown: 8,000 short sessions and 4 long ones, half a million rows) and ANALYZE it before seeding")
	fs.StringVar(&o.chat, "chat", "", "chat pairs instead of agent turns, and no frontends: 'exchange' (recordExchange, one request) or 'two-calls' (beginTurn then endTurn)")
	fs.BoolVar(&o.closing, "closing", true, "short turns send their read with endTurn, as the turn's closing write (one request and one commit fewer); -closing=false sends it alone, as before endTurn took closing writes")
	fs.BoolVar(&o.wholeReplica, "whole-replica", false, "the load's one API key may use the whole replica: its rate, in-flight, operation and pool-share limits are the replica's, as before the server had limits per key (all clients share one key; without it each client has a key of its own at the default limits)")
	showSQL := fs.String("show-sql", "", "operations (comma-separated, e.g. sessionsPage,recordRead-20) whose first request (seeding included) prints its SQL to stderr")
	_ = fs.Parse(args)
	for _, op := range strings.Split(*showSQL, ",") {
		if op = strings.TrimSpace(op); op != "" {
			o.showSQL = append(o.showSQL, op)
		}
	}
	for _, f := range strings.Split(*clients, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return o, fmt.Errorf("-clients %q: want positive counts separated by commas", *clients)
		}
		o.clients = append(o.clients, n)
	}
	if o.chat != "" && o.chat != "exchange" && o.chat != "two-calls" {
		return o, fmt.Errorf("-chat %q: want exchange or two-calls", o.chat)
	}
	if o.perFrontend < 1 || o.turns < 2 || o.duration <= 0 {
		return o, fmt.Errorf("-agents-per-frontend and -duration must be positive, -turns at least 2")
	}
	return o, nil
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// run sets up the database and the server, runs every phase and prints the
// report to out; progress goes to progress.
func run(ctx context.Context, opts options, out, progress io.Writer) error {
	started := time.Now()
	log := slog.New(slog.NewTextHandler(progress, &slog.HandlerOptions{Level: slog.LevelInfo}))
	db, err := openLoadDB(ctx, opts.databaseURL, opts.dataDir, log)
	if err != nil {
		return err
	}
	defer db.release()
	srv, err := startServer(ctx, db.DSN, opts.showSQL, opts.wholeReplica)
	if err != nil {
		return err
	}
	defer srv.close()
	key, err := srv.adminKey(ctx)
	if err != nil {
		return fmt.Errorf("admin key: %w", err)
	}

	side, err := sql.Open("postgres", db.DSN) // the floor and the statistics, apart from the server's pool
	if err != nil {
		return err
	}
	defer side.Close()
	probe, err := newFloorProbe(ctx, side)
	if err != nil {
		return err
	}
	defer probe.close()
	l := &load{
		opts:  opts,
		srv:   srv,
		probe: probe,
		stats: newPGStats(ctx, side),
		side:  side,
		url:   srv.URL + "/graphql",
		key:   key,
		http: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
			MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024, IdleConnTimeout: time.Minute}},
		log: log,
	}
	m := describeMachine(ctx, side, opts.databaseURL == "")

	if opts.grown {
		log.Info("loading the grown database")
		if err := grown.Load(ctx, side); err != nil {
			return err
		}
	}
	log.Info("seeding sessions for the frontends", "sessions", opts.seedSessions)
	if err := l.seed(ctx); err != nil {
		return err
	}
	var phases []phaseResult
	for _, n := range opts.clients {
		p, err := l.phase(ctx, n)
		if err != nil {
			return err
		}
		phases = append(phases, p)
	}
	r := report{opts: opts, machine: m, phases: phases, elapsed: time.Since(started)}
	r.print(out)
	return nil
}
