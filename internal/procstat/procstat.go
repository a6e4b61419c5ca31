// Package procstat reads CPU times from Linux's /proc, for the load
// generator and the comparison with PostGraphile, which measure what the
// server and the PostgreSQL backends serving it spend.
package procstat

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of /proc's CPU times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// ProcessCPU is a process's user and system CPU time, all its threads.
func ProcessCPU(pid int) (time.Duration, error) {
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

// MachineBusy is the non-idle CPU time of all CPUs since boot.
func MachineBusy() (time.Duration, error) {
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
