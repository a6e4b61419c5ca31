package main

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of /proc's CPU times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

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
	busy, err := machineBusy()
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
		if cpu, err := processTicks(pid); err == nil {
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

// machineBusy is the non-idle CPU time of all CPUs since boot.
func machineBusy() (time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
	if len(f) < 9 || f[0] != "cpu" {
		return 0, fmt.Errorf("/proc/stat: unexpected %q", line)
	}
	var busy int64
	for i, v := range f[1:9] {
		if i == 3 || i == 4 || i == 7 { // idle, iowait, steal (the hypervisor's, not ours)
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, err
		}
		busy += n
	}
	return time.Duration(busy) * clockTick, nil
}

// processTicks is a process's user and system CPU time.
func processTicks(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name may hold spaces; the fields after it are fixed.
	_, rest, ok := strings.Cut(string(b), ") ")
	if !ok {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	f := strings.Fields(rest) // state is f[0]; utime and stime are fields 14 and 15 of the whole line
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: bad CPU times", pid)
	}
	return time.Duration(utime+stime) * clockTick, nil
}
