package main

import (
	"context"
	"database/sql"
	"time"
)

// dbCounters are PostgreSQL's own counts for the run's database. statements
// comes from pg_stat_statements and is -1 when the extension is not loaded
// (it needs shared_preload_libraries, which the embedded default lacks).
type dbCounters struct {
	transactions int64
	statements   int64
}

// pgStats reads the database's statistics views on its own connection.
type pgStats struct {
	db              *sql.DB
	statementsKnown bool
}

// newPGStats checks whether pg_stat_statements answers in the run's
// database, creating the extension there if it is loaded but not created.
func newPGStats(ctx context.Context, db *sql.DB) *pgStats {
	s := &pgStats{db: db}
	if _, err := db.ExecContext(ctx, `CREATE EXTENSION IF NOT EXISTS pg_stat_statements`); err == nil {
		var n int64
		s.statementsKnown = db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_statements`).Scan(&n) == nil
	}
	return s
}

// read returns the counters now. Backends publish their counts when they go
// idle, at most once a second, so a read right after load is a little short.
func (s *pgStats) read(ctx context.Context) dbCounters {
	c := dbCounters{statements: -1}
	_ = s.db.QueryRowContext(ctx, `SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = current_database()`).
		Scan(&c.transactions)
	if s.statementsKnown {
		_ = s.db.QueryRowContext(ctx, `SELECT coalesce(sum(calls), 0)::bigint FROM pg_stat_statements
			WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&c.statements)
	}
	return c
}

// topStatement is one line of pg_stat_statements.
type topStatement struct {
	query     string
	calls     int64
	totalMs   float64
	perCallMs float64
}

// top returns the statements that took the most time in the database, or
// nothing when pg_stat_statements is not loaded.
func (s *pgStats) top(ctx context.Context, n int) []topStatement {
	if !s.statementsKnown {
		return nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT left(regexp_replace(query, '\s+', ' ', 'g'), 110), calls, total_exec_time, mean_exec_time
		FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
		ORDER BY total_exec_time DESC LIMIT $1`, n)
	if err != nil {
		return nil
	}
	defer rows.Close()
	var out []topStatement
	for rows.Next() {
		var t topStatement
		if rows.Scan(&t.query, &t.calls, &t.totalMs, &t.perCallMs) == nil {
			out = append(out, t)
		}
	}
	return out
}

// reset clears pg_stat_statements of the run's database (only), when it
// is loaded.
func (s *pgStats) reset(ctx context.Context) {
	if s.statementsKnown {
		_, _ = s.db.ExecContext(ctx, `SELECT pg_stat_statements_reset(0,
			(SELECT oid FROM pg_database WHERE datname = current_database()), 0)`)
	}
}

// waitSamples counts, over repeated looks at pg_stat_activity, what the
// run's database's busy backends were waiting on: "Lock:advisory",
// "IO:WALSync", "CPU" when they waited on nothing (running, or waiting for
// the CPU), or "idle in transaction" when they waited for the server's next
// statement inside a transaction. It is the evidence of what bounds the
// write path.
type waitSamples struct {
	looks  int
	counts map[string]int
}

// sampleWaits looks every interval until ctx ends.
func (s *pgStats) sampleWaits(ctx context.Context, interval time.Duration) waitSamples {
	w := waitSamples{counts: map[string]int{}}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return w
		case <-tick.C:
		}
		rows, err := s.db.QueryContext(context.WithoutCancel(ctx), `SELECT CASE WHEN state = 'active'
				THEN coalesce(wait_event_type || ':' || wait_event, 'CPU') ELSE 'idle in transaction' END, count(*)
			FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
				AND state IN ('active', 'idle in transaction')
			GROUP BY 1`)
		if err != nil {
			continue
		}
		w.looks++
		for rows.Next() {
			var what string
			var n int
			if rows.Scan(&what, &n) == nil {
				w.counts[what] += n
			}
		}
		rows.Close()
	}
}
