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

// report gathers the windows and prints them as Markdown tables, ready for
// BENCHMARKS.md.
type report struct {
	opts             options
	started          time.Time
	commit           string
	postgres, node   string
	loadMin, loadMax float64
	checked          []string
	windows          []*window
}

// describe records what was measured on what.
func (r *report) describe(ctx context.Context, repo string, admin *sql.DB, node string) {
	r.commit = gitDescribe(ctx, repo)
	if err := admin.QueryRowContext(ctx, `SHOW server_version`).Scan(&r.postgres); err != nil {
		r.postgres = "unknown"
	}
	r.node = nodeVersion(ctx, node)
}

func (r *report) add(w *window) {
	r.windows = append(r.windows, w)
	r.loadMin, r.loadMax = min(r.loadMin, w.Load), max(r.loadMax, w.Load)
}

func (r *report) printHeader(out io.Writer) {
	fmt.Fprintf(out, "sessiongraph %s against PostGraphile 5.1.5 (Node %s), PostgreSQL %s, %s, %d CPUs\n",
		r.commit, r.node, r.postgres, runtime.Version(), runtime.NumCPU())
	fmt.Fprintf(out, "started %s; %d rounds of %s (after %s of warmup) per server, page and client count\n",
		r.started.Format("2006-01-02 15:04 MST"), r.opts.rounds, r.opts.duration, r.opts.warmup)
}

// printTables prints the answers' check, every window, then the medians.
func (r *report) printTables(out io.Writer) {
	fmt.Fprintf(out, "finished %s; load average (1 min) %.1f–%.1f over the windows\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), r.loadMin, r.loadMax)
	for _, c := range r.checked {
		fmt.Fprintln(out, "checked:", c)
	}
	errors := 0
	fmt.Fprintln(out, "\nWindows:\n\n| data | round | page | clients | server | req/s | errors | load |\n|---|---:|---|---:|---|---:|---:|---:|")
	for _, w := range r.windows {
		fmt.Fprintf(out, "| %s | %d | %s | %d | %s | %.0f | %d | %.1f |\n", w.Data, w.Round, w.Page, w.Clients, w.Target, w.perSecond(), w.Errors, w.Load)
		errors += w.Errors
		if w.FirstError != "" {
			fmt.Fprintf(out, "|   | first error: %s |\n", strings.ReplaceAll(w.FirstError, "|", "/"))
		}
	}
	if errors > 0 {
		fmt.Fprintf(out, "\n**%d answers were errors or of another length than the checked one: the run is not valid.**\n", errors)
	}

	targets := r.targets()
	fmt.Fprint(out, "\nRequests per second, medians of the rounds; ratios are sessiongraph's over PostGraphile's, the median of each round's (its lowest–highest):\n\n")
	head := "| data | page | clients |"
	rule := "|---|---|---:|"
	for _, t := range targets {
		head += " " + t + " |"
		rule += "---:|"
	}
	for _, t := range targets[1:] {
		head += " sessiongraph ÷ " + t + " |"
		rule += "---:|"
	}
	fmt.Fprintln(out, head+"\n"+rule)
	r.eachCell(func(data, pageName string, clients int, ws map[string][]*window) {
		line := fmt.Sprintf("| %s | %s | %d |", data, pageName, clients)
		for _, t := range targets {
			if len(ws[t]) == 0 {
				line += " – |"
				continue
			}
			line += fmt.Sprintf(" %s |", number(median(mapWindows(ws[t], (*window).perSecond))))
		}
		for _, t := range targets[1:] {
			if len(ws[t]) == 0 {
				line += " – |"
				continue
			}
			var ratios []float64
			for i, w := range ws[targets[0]] {
				if i < len(ws[t]) {
					ratios = append(ratios, w.perSecond()/ws[t][i].perSecond())
				}
			}
			line += fmt.Sprintf(" %.2f× (%.2f–%.2f) |", median(ratios), slices.Min(ratios), slices.Max(ratios))
		}
		fmt.Fprintln(out, line)
	})

	fmt.Fprint(out, "\nCost per page, medians of the rounds: CPU of the server's processes and of the PostgreSQL backends serving it (/proc, during the measurement), and its database's rows returned and shared buffer hits (pg_stat_database, over warmup and measurement):\n\n")
	fmt.Fprintln(out, "| data | page | clients | server | server CPU ms | PostgreSQL CPU ms | rows returned | buffer hits |\n|---|---|---:|---|---:|---:|---:|---:|")
	r.eachCell(func(data, pageName string, clients int, ws map[string][]*window) {
		for _, t := range targets {
			w := ws[t]
			if len(w) == 0 {
				continue
			}
			fmt.Fprintf(out, "| %s | %s | %d | %s | %.3f | %.3f | %s | %s |\n", data, pageName, clients, t,
				median(mapWindows(w, func(w *window) float64 { return w.perPage(w.ServerCPU) })),
				median(mapWindows(w, func(w *window) float64 { return w.perPage(w.BackendCPU) })),
				number(median(mapWindows(w, func(w *window) float64 { return float64(w.Counters.tupReturned) / float64(w.Served) }))),
				number(median(mapWindows(w, func(w *window) float64 { return float64(w.Counters.blksHit) / float64(w.Served) }))))
		}
	})
}

// targets are the servers' names in the order they were started.
func (r *report) targets() []string {
	var names []string
	for _, w := range r.windows {
		if !slices.Contains(names, w.Target) {
			names = append(names, w.Target)
		}
	}
	slices.SortStableFunc(names, func(a, b string) int { // sessiongraph first
		return boolInt(b == "sessiongraph") - boolInt(a == "sessiongraph")
	})
	return names
}

// eachCell calls f with the windows of each data set, page and client
// count, by server, in round order.
func (r *report) eachCell(f func(data, page string, clients int, byTarget map[string][]*window)) {
	for _, data := range r.opts.datasets {
		for _, p := range r.opts.pages {
			for _, clients := range r.opts.clients {
				by := map[string][]*window{}
				for _, w := range r.windows {
					if w.Data == data && w.Page == p.Name && w.Clients == clients {
						by[w.Target] = append(by[w.Target], w)
					}
				}
				if len(by) > 0 {
					f(data, p.Name, clients, by)
				}
			}
		}
	}
}

func mapWindows(ws []*window, f func(*window) float64) []float64 {
	out := make([]float64, len(ws))
	for i, w := range ws {
		out[i] = f(w)
	}
	return out
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// number writes a count with a thousands separator and no decimals, or
// one decimal under 100.
func number(x float64) string {
	if x < 100 {
		return fmt.Sprintf("%.1f", x)
	}
	s := fmt.Sprintf("%.0f", x)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
