package main

import (
	"bytes"
	"context"
	"runtime/pprof"
	"testing"
	"time"
)

func TestPerOperationSpreadsOverheadAndScalesToProcessTime(t *testing.T) {
	split := cpuSplit{
		process:     2 * time.Second, // getrusage saw twice what the profile sampled
		byOp:        map[string]time.Duration{"beginTurn": 400 * time.Millisecond, "endTurn": 200 * time.Millisecond},
		serverOther: 100 * time.Millisecond,
		client:      200 * time.Millisecond,
		runtime:     100 * time.Millisecond,
	}
	// beginTurn: 400ms/100 own + 100ms/200 requests = 4.5ms; runtime share
	// 1000/900; scaled by 2000/1000.
	got := split.perOperation("beginTurn", 100, 200)
	want := time.Duration(4.5 * 1000.0 / 900.0 * 2 * float64(time.Millisecond))
	if d := got - want; d < -time.Microsecond || d > time.Microsecond {
		t.Errorf("perOperation = %v, want %v", got, want)
	}
	if got := split.perOperation("beginTurn", 0, 200); got != 0 {
		t.Errorf("no requests, perOperation = %v, want 0", got)
	}
}

func TestSplitProfileReadsLabels(t *testing.T) {
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		t.Skip("a CPU profile is already running:", err)
	}
	// Burn CPU time, not wall time: the machine may be busy.
	burn := func(ctx context.Context) {
		for until := processCPU() + 300*time.Millisecond; processCPU() < until; {
		}
	}
	pprof.Do(context.Background(), pprof.Labels("side", "server"), func(ctx context.Context) {
		pprof.Do(ctx, pprof.Labels("op", "context-THINK"), burn)
	})
	pprof.Do(context.Background(), pprof.Labels("side", "client"), burn)
	pprof.StopCPUProfile()

	split, err := splitProfile(buf.Bytes(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	think, client := split.byOp["context-THINK"], split.client
	if think < 150*time.Millisecond || client < 150*time.Millisecond || split.serverOther != 0 {
		t.Errorf("labelled CPU: THINK %v, client %v; want each near 300ms (split %+v)", think, client, split)
	}
}
