package main

import (
	"testing"
	"time"
)

func TestPercentileIsNearestRank(t *testing.T) {
	ms := func(n ...int) latencies {
		out := make(latencies, len(n))
		for i, v := range n {
			out[i] = time.Duration(v) * time.Millisecond
		}
		return out
	}
	hundred := make(latencies, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	cases := []struct {
		name    string
		samples latencies
		p       float64
		want    time.Duration
	}{
		{"none", nil, 50, 0},
		{"one sample is every percentile", ms(7), 99, 7 * time.Millisecond},
		{"median of an odd count is the middle", ms(1, 2, 3), 50, 2 * time.Millisecond},
		{"median of an even count is the lower middle", ms(1, 2, 3, 4), 50, 2 * time.Millisecond},
		{"p99 of 100 is the 99th", hundred, 99, 99 * time.Millisecond},
		{"p50 of 100 is the 50th", hundred, 50, 50 * time.Millisecond},
		{"p99 of 10 is the largest", ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 99, 10 * time.Millisecond},
		{"p100 is the largest", ms(1, 5, 9), 100, 9 * time.Millisecond},
	}
	for _, c := range cases {
		if got := percentile(c.samples, c.p); got != c.want {
			t.Errorf("%s: percentile(%v, %v) = %v, want %v", c.name, c.samples, c.p, got, c.want)
		}
	}
}

func TestSummarizeSortsACopy(t *testing.T) {
	samples := latencies{3 * time.Millisecond, 1 * time.Millisecond, 2 * time.Millisecond}
	s := summarize(samples)
	if s.count != 3 || s.median != 2*time.Millisecond || s.p99 != 3*time.Millisecond {
		t.Errorf("summarize = %+v", s)
	}
	if samples[0] != 3*time.Millisecond {
		t.Error("summarize reordered its input")
	}
}

func TestRecorderKeepsOnlyMeasuredSamples(t *testing.T) {
	r := newRecorder()
	r.add("beginTurn", time.Millisecond) // warm-up
	r.start()
	r.add("beginTurn", 2*time.Millisecond)
	got := r.stop()
	r.add("beginTurn", 3*time.Millisecond) // after the phase
	if len(got["beginTurn"]) != 1 || got["beginTurn"][0] != 2*time.Millisecond {
		t.Errorf("kept %v, want only the measured sample", got)
	}
}
