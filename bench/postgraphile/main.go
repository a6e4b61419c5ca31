// Command postgraphile measures sessiongraph against PostGraphile 5.1.5 on
// the same PostgreSQL and the same data (make compare-postgraphile; see
// README.md here and BENCHMARKS.md, "Against PostGraphile 5.1.5").
//
// For each data set (fresh: the nested page's sessions alone; grown: the
// same on internal/grown's half a million rows) it loads sessiongraph's
// database and copies it for PostGraphile, checks that both servers answer
// the nested and the simple page with the same objects and values, then
// runs interleaved rounds: in each, every page at every client count on
// every server in turn, the servers' order reversed every other round.
// It prints requests per second, their ratios round by round, and each
// server's and its PostgreSQL backends' cost per page.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	_ "github.com/lib/pq"
)

type options struct {
	databaseURL      string
	repo             string
	datasets         []string
	pages            []page
	clients          []int
	rounds           int
	prewarm          time.Duration
	warmup, duration time.Duration
	twoProcesses     bool
	keep             bool
}

func main() {
	opts, err := parseOptions(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "compare-postgraphile:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, opts); err != nil {
		fmt.Fprintln(os.Stderr, "compare-postgraphile:", err)
		os.Exit(1)
	}
}

func parseOptions(args []string) (options, error) {
	o := options{}
	fs := flag.NewFlagSet("compare-postgraphile", flag.ExitOnError)
	fs.StringVar(&o.databaseURL, "database-url", os.Getenv("DATABASE_URL"), "PostgreSQL to make the "+dbPrefix+"* databases on, as a superuser (DATABASE_URL)")
	fs.StringVar(&o.repo, "repo", ".", "the checkout to build and measure")
	datasets := fs.String("data", "fresh,grown", "data sets, each measured on its own: fresh (the nested page's sessions alone), grown (the same on internal/grown's rows)")
	pages := fs.String("pages", "nested,simple", "pages to measure: nested, simple")
	clients := fs.String("clients", "1,8", "client counts")
	fs.IntVar(&o.rounds, "rounds", 6, "interleaved rounds")
	fs.DurationVar(&o.prewarm, "prewarm", 5*time.Second, "load on each server and page, at the most clients, before the first round (Node's JIT and both servers' caches)")
	fs.DurationVar(&o.warmup, "warmup", 2*time.Second, "load before each window's measurement")
	fs.DurationVar(&o.duration, "duration", 8*time.Second, "each window's measurement")
	fs.BoolVar(&o.twoProcesses, "two-processes", true, "also measure PostGraphile as two processes, the clients split between them")
	fs.BoolVar(&o.keep, "keep", false, "keep the "+dbPrefix+"* databases afterwards")
	_ = fs.Parse(args)
	if o.databaseURL == "" {
		return o, errors.New("set DATABASE_URL (or -database-url) to a PostgreSQL the comparison may make databases on, e.g. postgres://postgres@/postgres?host=$PWD/.data/postgres for this checkout's private cluster")
	}
	for _, d := range strings.Split(*datasets, ",") {
		if d != "fresh" && d != "grown" {
			return o, fmt.Errorf("-data %q: want fresh and/or grown", *datasets)
		}
		o.datasets = append(o.datasets, d)
	}
	for _, p := range strings.Split(*pages, ",") {
		switch p {
		case "nested":
			o.pages = append(o.pages, nestedPage)
		case "simple":
			o.pages = append(o.pages, simplePage)
		default:
			return o, fmt.Errorf("-pages %q: want nested and/or simple", *pages)
		}
	}
	for _, c := range strings.Split(*clients, ",") {
		n, err := strconv.Atoi(c)
		if err != nil || n < 1 {
			return o, fmt.Errorf("-clients %q: want positive counts", *clients)
		}
		o.clients = append(o.clients, n)
	}
	if o.rounds < 1 || o.duration <= 0 || o.warmup < 0 {
		return o, errors.New("-rounds and -duration must be positive")
	}
	return o, nil
}

func run(ctx context.Context, opts options) error {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	repo, err := filepath.Abs(opts.repo)
	if err != nil {
		return err
	}
	benchDir := filepath.Join(repo, "bench", "postgraphile")
	if err := ensureNodeModules(ctx, benchDir, log); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "compare-postgraphile-")
	if err != nil {
		return err
	}
	log.Info("building sessiongraph; server logs go here", "dir", work)
	bin, err := buildSessiongraph(ctx, repo, work)
	if err != nil {
		return err
	}
	admin, err := sql.Open("postgres", opts.databaseURL)
	if err != nil {
		return err
	}
	defer admin.Close()
	admin.SetMaxOpenConns(2)

	r := &report{opts: opts, started: time.Now().UTC(), loadMin: loadAverage(), loadMax: loadAverage()}
	r.describe(ctx, repo, admin, filepath.Join(benchDir, "node_modules", ".bin", "node"))
	r.printHeader(os.Stdout)
	for _, name := range opts.datasets {
		if err := measureDataset(ctx, opts, r, admin, bin, benchDir, work, name, log); err != nil {
			return err
		}
	}
	r.printTables(os.Stdout)
	return os.RemoveAll(work) // on an error it stays, with the servers' logs
}

// measureDataset loads one data set, serves it with each server, checks the
// answers and runs the rounds.
func measureDataset(ctx context.Context, opts options, r *report, admin *sql.DB, bin, benchDir, work, name string, log *slog.Logger) error {
	copies := 1
	if opts.twoProcesses {
		copies = 2
	}
	d, err := loadDataset(ctx, admin, opts.databaseURL, name, copies, log)
	if err != nil {
		return err
	}
	if !opts.keep {
		defer func() {
			log.Info("dropping the data set's databases", "data", name)
			if err := d.drop(context.Background(), admin); err != nil {
				log.Error("dropping the data set's databases", "error", err)
			}
		}()
	}
	var targets []*target
	defer func() {
		log.Info("stopping the servers", "data", name)
		var wg sync.WaitGroup
		for _, t := range targets {
			for _, p := range t.Procs {
				wg.Go(p.stop)
			}
		}
		wg.Wait()
	}()
	sg, err := startSessiongraph(ctx, bin, d.SG, filepath.Join(work, "sessiongraph-"+name+".log"))
	if err != nil {
		return err
	}
	targets = append(targets, &target{Name: "sessiongraph", URLs: []string{sg.URL}, Procs: []*process{sg}, Database: d.sgName, Key: d.AdminKey,
		query: func(p page) string { return p.SG }})
	for i, copyName := range d.pgNames {
		t := &target{Name: "PostGraphile 5", Database: copyName, query: func(p page) string { return p.PG }}
		procs := 1
		if i == 1 {
			t.Name, procs = "PostGraphile 5 ×2", 2
		}
		targets = append(targets, t)
		for j := range procs {
			p, err := startPostGraphile(ctx, benchDir, d.PG[i], filepath.Join(work, fmt.Sprintf("postgraphile-%s-%d-%d.log", name, i, j)))
			if err != nil {
				return err
			}
			t.Procs, t.URLs = append(t.Procs, p), append(t.URLs, p.URL)
		}
	}
	lengths, err := checkAnswers(ctx, opts.pages, targets)
	if err != nil {
		return fmt.Errorf("%s data: %w", name, err)
	}
	for _, p := range opts.pages {
		r.checked = append(r.checked, fmt.Sprintf("%s data, %s: %d objects, the same values from every server (answers of %d bytes from sessiongraph, %d from PostGraphile)",
			name, p.Name, p.Objects, lengths[targets[0]][p.Name], lengths[targets[1]][p.Name]))
	}
	log.Info("answers checked", "data", name, "pages", len(opts.pages), "servers", len(targets))
	m := newMeter(admin)
	// The first minutes of a Node process are slower (V8 compiles hot code
	// as it finds it); a prewarm keeps that out of the first round.
	for _, t := range targets {
		for _, p := range opts.pages {
			res := drive(ctx, t, requestBody(t.query(p)), lengths[t][p.Name], slices.Max(opts.clients), 0, opts.prewarm, func() {})
			if res.Errors > 0 {
				return fmt.Errorf("%s, %s page, prewarm: %d errors, the first: %s", t.Name, p.Name, res.Errors, res.FirstError)
			}
		}
		m.used(t.Database)
	}
	for round := 1; round <= opts.rounds; round++ {
		for _, clients := range opts.clients {
			for _, p := range opts.pages {
				order := targets
				if round%2 == 0 {
					order = reversed(targets)
				}
				for _, t := range order {
					if len(t.URLs) > clients {
						continue // two processes for one client are one process
					}
					w, err := m.window(ctx, t, p, clients, lengths[t][p.Name], opts)
					if err != nil {
						return err
					}
					w.Data, w.Round = name, round
					r.add(w)
					log.Info("window", "data", name, "round", round, "page", p.Name, "clients", clients, "server", t.Name,
						"req/s", fmt.Sprintf("%.0f", w.perSecond()), "errors", w.Errors, "load", w.Load)
				}
			}
		}
	}
	return m.settleAll(ctx)
}

// checkAnswers asks every server each page once, requires the same objects
// and values as sessiongraph's answer (sameAnswer) and returns each
// answer's length in bytes, which every answer while measured must have.
func checkAnswers(ctx context.Context, pages []page, targets []*target) (map[*target]map[string]int, error) {
	lengths := map[*target]map[string]int{}
	client := newHTTPClient(1)
	for _, p := range pages {
		var want []byte
		for _, t := range targets {
			if lengths[t] == nil {
				lengths[t] = map[string]int{}
			}
			for _, url := range t.URLs {
				status, body, err := t.post(ctx, client, url, requestBody(t.query(p)))
				if err != nil || status != 200 {
					return nil, fmt.Errorf("%s, %s page: status %d, %v: %.300s", t.Name, p.Name, status, err, body)
				}
				if want == nil {
					want = body
				}
				n, err := sameAnswer(want, body)
				if err != nil {
					return nil, fmt.Errorf("%s's %s page differs from sessiongraph's: %w", t.Name, p.Name, err)
				}
				if n != p.Objects {
					return nil, fmt.Errorf("%s's %s page has %d objects, want %d", t.Name, p.Name, n, p.Objects)
				}
				lengths[t][p.Name] = len(body)
			}
		}
	}
	return lengths, nil
}

func reversed(ts []*target) []*target {
	out := make([]*target, len(ts))
	for i, t := range ts {
		out[len(ts)-1-i] = t
	}
	return out
}

// gitDescribe is the checkout's commit, with +dirty when it has changes.
func gitDescribe(ctx context.Context, repo string) string {
	out, err := exec.CommandContext(ctx, "git", "-C", repo, "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	commit := strings.TrimSpace(string(out))
	if st, _ := exec.CommandContext(ctx, "git", "-C", repo, "status", "--porcelain", "--untracked-files=no").Output(); len(st) > 0 {
		commit += "+dirty"
	}
	return commit
}
