package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// target is one server under test: sessiongraph, or PostGraphile as one
// process or as two (its clients split between them, as a load balancer
// would).
type target struct {
	Name     string
	URLs     []string
	Procs    []*process
	Database string // the database it serves, for pg_stat_database and its backends
	Key      string // API key (sessiongraph)
	query    func(page) string
}

// post sends one request and returns the answer's body.
func (t *target) post(ctx context.Context, client *http.Client, url string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if t.Key != "" {
		req.Header.Set("Authorization", "Bearer "+t.Key)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// newHTTPClient keeps a connection per client alive and asks for no
// compression (Go's transport would ask for gzip; PostGraphile does not
// compress), so both servers write the same plain JSON.
func newHTTPClient(clients int) *http.Client {
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxIdleConns: 2 * clients, MaxIdleConnsPerHost: 2 * clients, IdleConnTimeout: time.Minute, DisableCompression: true}}
}

// drive is one window's load: clients send the page back to back, each
// waiting for its answer, for warmup and then for duration; at the
// measurement's start and end it calls mark. Every answer must be 200 with
// wantLen bytes (the length of the checked answer: these pages do not
// change while measured); any other is an error.
type driveResult struct {
	Warmup, Measured int // answers completed in each phase
	Errors           int
	FirstError       string
	Elapsed          time.Duration // of the measurement
}

func drive(ctx context.Context, t *target, body []byte, wantLen, clients int, warmup, duration time.Duration, mark func()) driveResult {
	client := newHTTPClient(clients)
	defer client.CloseIdleConnections()
	const (
		warming = iota
		measuring
		done
	)
	var phase atomic.Int32
	var counts [2]atomic.Int64
	var errs atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for c := range clients {
		url := t.URLs[c%len(t.URLs)]
		wg.Go(func() {
			for {
				p := phase.Load()
				if p == done || ctx.Err() != nil {
					return
				}
				status, b, err := t.post(ctx, client, url, body)
				p = phase.Load()
				if p == done {
					return
				}
				if err != nil || status != http.StatusOK || len(b) != wantLen {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, fmt.Sprintf("status %d, %d bytes (want %d), %v: %.200s", status, len(b), wantLen, err, b))
					continue
				}
				counts[p].Add(1)
			}
		})
	}
	sleep(ctx, warmup)
	mark()
	start := time.Now()
	phase.Store(measuring)
	sleep(ctx, duration)
	phase.Store(done)
	elapsed := time.Since(start)
	mark()
	wg.Wait()
	r := driveResult{Warmup: int(counts[warming].Load()), Measured: int(counts[measuring].Load()), Errors: int(errs.Load()), Elapsed: elapsed}
	if s, ok := firstErr.Load().(string); ok {
		r.FirstError = s
	}
	return r
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
