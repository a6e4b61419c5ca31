package main

import (
	"context"
	"database/sql"
	"time"
)

// window is one server serving one page at one client count for a round:
// what it served and what that cost.
type window struct {
	Data             string
	Round            int
	Target           string
	Page             string
	Clients          int
	Measured, Served int // answers in the measurement; in warmup and measurement together
	Errors           int
	FirstError       string
	Elapsed          time.Duration
	ServerCPU        time.Duration // the server's processes, during the measurement
	BackendCPU       time.Duration // the PostgreSQL backends of its database, during the measurement
	Counters         dbCounters    // its database's pg_stat_database, over warmup and measurement
	countersKnown    bool
	Load             float64 // the machine's load average at the window's start
	before           dbCounters
	database         string
}

func (w *window) perSecond() float64 { return float64(w.Measured) / w.Elapsed.Seconds() }

// perPage is a cost divided over the measured answers, in milliseconds.
func (w *window) perPage(d time.Duration) float64 {
	return d.Seconds() * 1e3 / float64(w.Measured)
}

// meter runs windows and attributes each database's counters to them.
// pg_stat_database hears of a backend's work up to 10 s late (statsSettle),
// so a window's counters are read when its database has been idle that
// long: before the next window on the same database (the other servers'
// windows usually fill the wait) or at the end. They cover warmup and
// measurement and are divided by every answer served in both.
type meter struct {
	monitor *sql.DB
	last    map[string]*window   // the latest window of each database
	ended   map[string]time.Time // when it ended
}

func newMeter(monitor *sql.DB) *meter {
	return &meter{monitor: monitor, last: map[string]*window{}, ended: map[string]time.Time{}}
}

// used records that database was just served outside a window (the
// prewarm), so that the first window's counters start after it settled.
func (m *meter) used(database string) { m.ended[database] = time.Now() }

// settle waits until database's counters are complete, reads them, closes
// the database's previous window with them and returns them.
func (m *meter) settle(ctx context.Context, database string) (dbCounters, error) {
	if end, ok := m.ended[database]; ok {
		sleep(ctx, time.Until(end.Add(statsSettle)))
	}
	c, err := readCounters(ctx, m.monitor, database)
	if err != nil {
		return c, err
	}
	if w := m.last[database]; w != nil && !w.countersKnown {
		w.Counters = dbCounters{c.tupReturned - w.before.tupReturned, c.blksHit - w.before.blksHit, c.blksRead - w.before.blksRead}
		w.countersKnown = true
	}
	return c, nil
}

// settleAll closes every database's last window.
func (m *meter) settleAll(ctx context.Context) error {
	for db := range m.last {
		if _, err := m.settle(ctx, db); err != nil {
			return err
		}
	}
	return nil
}

// window serves page to t from clients for warmup then duration.
func (m *meter) window(ctx context.Context, t *target, p page, clients, wantLen int, opts options) (*window, error) {
	before, err := m.settle(ctx, t.Database)
	if err != nil {
		return nil, err
	}
	w := &window{Target: t.Name, Page: p.Name, Clients: clients, Load: loadAverage(), before: before, database: t.Database}
	var cpu [2]cpuSnapshot
	var cpuErr error
	marks := 0
	mark := func() {
		s, err := snapshotCPU(ctx, m.monitor, t)
		if err != nil && cpuErr == nil {
			cpuErr = err
		}
		cpu[marks] = s
		marks++
	}
	res := drive(ctx, t, requestBody(t.query(p)), wantLen, clients, opts.warmup, opts.duration, mark)
	m.last[t.Database], m.ended[t.Database] = w, time.Now()
	if cpuErr != nil {
		return nil, cpuErr
	}
	w.Measured, w.Served, w.Errors, w.FirstError, w.Elapsed = res.Measured, res.Warmup+res.Measured, res.Errors, res.FirstError, res.Elapsed
	w.ServerCPU, w.BackendCPU = cpu[1].since(cpu[0])
	return w, ctx.Err()
}
