package main

import (
	"context"
	"database/sql"
	"time"

	"sessiongraph/internal/procstat"
)

// hostCPU is where the machine's CPU time went during a window: this
// process, the PostgreSQL backends serving the run's database, and
// everything else (other PostgreSQL processes, other programs).
type hostCPU struct {
	busy     time.Duration // all CPUs, from /proc/stat
	postgres time.Duration // backends of the run's database, from /proc/<pid>/stat
	known    bool          // false when /proc or the backends cannot be read (PostgreSQL elsewhere)
}

// cpuSnapshot is the counters hostCPU is the difference of.
type cpuSnapshot struct {
	busy     time.Duration
	backends map[int]time.Duration
	ok       bool
}

// snapshotCPU reads the machine's busy time and the CPU time of every
// backend connected to the run's database (PostgreSQL on this host).
func snapshotCPU(ctx context.Context, db *sql.DB) cpuSnapshot {
	s := cpuSnapshot{backends: map[int]time.Duration{}}
	busy, err := procstat.MachineBusy()
	if err != nil {
		return s
	}
	s.busy = busy
	rows, err := db.QueryContext(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database()`)
	if err != nil {
		return s
	}
	defer rows.Close()
	for rows.Next() {
		var pid int
		if rows.Scan(&pid) != nil {
			continue
		}
		if cpu, err := procstat.ProcessCPU(pid); err == nil {
			s.backends[pid] = cpu
		}
	}
	s.ok = rows.Err() == nil && len(s.backends) > 0
	return s
}

// since returns the CPU used between before and s. A backend that started
// in between counts from zero.
func (s cpuSnapshot) since(before cpuSnapshot) hostCPU {
	h := hostCPU{busy: s.busy - before.busy, known: s.ok && before.ok}
	for pid, cpu := range s.backends {
		h.postgres += cpu - before.backends[pid]
	}
	return h
}
