package main

import (
	"context"
	"database/sql"
	"os"
	"strconv"
	"strings"
	"time"

	"sessiongraph/internal/procstat"
)

// cpuSnapshot is the CPU time so far of a target's server processes and of
// the PostgreSQL backends connected to its database (PostgreSQL on this
// host, read from /proc).
type cpuSnapshot struct {
	server   time.Duration
	backends map[int]time.Duration
}

// snapshotCPU reads t's processes' and its database's backends' CPU times;
// monitor is a connection to another database of the same PostgreSQL.
func snapshotCPU(ctx context.Context, monitor *sql.DB, t *target) (cpuSnapshot, error) {
	s := cpuSnapshot{backends: map[int]time.Duration{}}
	for _, p := range t.Procs {
		cpu, err := procstat.ProcessCPU(p.pid())
		if err != nil {
			return s, err
		}
		s.server += cpu
	}
	rows, err := monitor.QueryContext(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = $1`, t.Database)
	if err != nil {
		return s, err
	}
	defer rows.Close()
	for rows.Next() {
		var pid int
		if err := rows.Scan(&pid); err != nil {
			return s, err
		}
		if cpu, err := procstat.ProcessCPU(pid); err == nil { // a backend may have just exited
			s.backends[pid] = cpu
		}
	}
	return s, rows.Err()
}

// since returns the server's and the backends' CPU between before and s; a
// backend that started in between counts from zero.
func (s cpuSnapshot) since(before cpuSnapshot) (server, backends time.Duration) {
	for pid, cpu := range s.backends {
		backends += cpu - before.backends[pid]
	}
	return s.server - before.server, backends
}

// dbCounters is a database's pg_stat_database row: rows returned (read by
// scans) and shared buffer hits.
type dbCounters struct{ tupReturned, blksHit, blksRead int64 }

// statsSettle is how long after a database's last request its counters are
// complete: a backend flushes its statistics at most once a second while
// busy, and an idle one that could not flush tries again 10 s later
// (PostgreSQL 15's PGSTAT_IDLE_INTERVAL).
const statsSettle = 11 * time.Second

// readCounters reads database's counters as the statistics system has them
// now: each autocommit statement takes a fresh statistics snapshot.
func readCounters(ctx context.Context, monitor *sql.DB, database string) (dbCounters, error) {
	var c dbCounters
	err := monitor.QueryRowContext(ctx, `SELECT tup_returned, blks_hit, blks_read FROM pg_stat_database WHERE datname = $1`, database).
		Scan(&c.tupReturned, &c.blksHit, &c.blksRead)
	return c, err
}

// loadAverage is the first field of /proc/loadavg: the machine's run queue
// over the last minute.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}
