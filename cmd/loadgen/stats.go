package main

import (
	"math"
	"slices"
	"sync"
	"time"
)

// latencies is every sample of one operation in one phase. All samples are
// kept: a phase holds at most a few tens of thousands, and exact percentiles
// need them all.
type latencies []time.Duration

// percentile returns the nearest-rank p-th percentile (0 < p <= 100) of
// sorted samples: the smallest sample that at least p% of samples do not
// exceed. It is zero when there are none.
func percentile(sorted latencies, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(float64(len(sorted)) * p / 100))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// summary is what the report prints about one operation's latencies.
type summary struct {
	count       int
	median, p99 time.Duration
}

func summarize(samples latencies) summary {
	sorted := slices.Clone(samples)
	slices.Sort(sorted)
	return summary{count: len(sorted), median: percentile(sorted, 50), p99: percentile(sorted, 99)}
}

// recorder collects latencies by operation while a phase is being measured;
// samples taken during the warm-up are dropped.
type recorder struct {
	mu        sync.Mutex
	measuring bool
	samples   map[string]latencies
}

func newRecorder() *recorder { return &recorder{samples: map[string]latencies{}} }

// start begins keeping samples.
func (r *recorder) start() {
	r.mu.Lock()
	r.measuring = true
	r.mu.Unlock()
}

// stop stops keeping samples and returns what was kept.
func (r *recorder) stop() map[string]latencies {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.measuring = false
	out := r.samples
	r.samples = map[string]latencies{}
	return out
}

// add keeps one sample if the phase is being measured and reports whether it did.
func (r *recorder) add(op string, d time.Duration) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.measuring {
		return false
	}
	r.samples[op] = append(r.samples[op], d)
	return true
}
