package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"sessiongraph/internal/access"
	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
	"sessiongraph/internal/engine"
)

// serverLoggingToAFile starts a server that logs as production does (JSON
// at info) to a file, as stderr redirected by a supervisor is.
func serverLoggingToAFile(b *testing.B) (*apitest.Server, *os.File) {
	logFile, err := os.Create(filepath.Join(b.TempDir(), "server.log"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { logFile.Close() })
	s := apitest.New(b, func(c *app.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(logFile, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
	return s, logFile
}

// BenchmarkRequestWithProductionLogging serves requests through the whole
// handler, logging as production does (JSON at info) to a file, as stderr
// redirected by a supervisor is: a small authenticated query, and /healthz,
// where the access log is most of the work. It reports the log bytes each
// request costs; at 2,800 requests/s, 180 B/request is 0.5 MB/s.
func BenchmarkRequestWithProductionLogging(b *testing.B) {
	s, logFile := serverLoggingToAFile(b)
	h := s.Handler()
	for _, c := range []struct {
		name, method, path, body string
	}{
		{"graphql", http.MethodPost, "/graphql", `{"query":"{ viewer { role } }"}`},
		{"healthz", http.MethodGet, "/healthz", ""},
	} {
		b.Run(c.name, func(b *testing.B) {
			serve := func() {
				var body io.Reader
				if c.body != "" {
					body = strings.NewReader(c.body)
				}
				req := httptest.NewRequest(c.method, c.path, body)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+s.Key)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
			}
			serve() // caches the key
			before, _ := logFile.Seek(0, io.SeekCurrent)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				serve()
			}
			b.StopTimer()
			after, _ := logFile.Seek(0, io.SeekCurrent)
			b.ReportMetric(float64(after-before)/float64(b.N), "logB/op")
		})
	}
}

// BenchmarkWriteTailWithProductionLogging is the write path under load as
// a tail measurement runs it: 8 clients over HTTP, each updating its own
// session, the server logging as production does to a file. It reports the
// median and 99th percentile latency and the log bytes per request.
func BenchmarkWriteTailWithProductionLogging(b *testing.B) {
	const clients = 8
	s, logFile := serverLoggingToAFile(b)
	ids := make([]string, clients)
	for i := range ids {
		opened, err := s.Engine.Sessions.OpenSession(access.System(context.Background()),
			engine.OpenSessionInput{Tenant: "bench", ExternalKey: fmt.Sprint("tail-", i)})
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = opened.Session.ID.String()
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	update := func(id string, n int) time.Duration {
		body, _ := json.Marshal(map[string]any{
			"query":     `mutation($in: UpdateSessionInput!) { updateSession(input: $in) { __typename } }`,
			"variables": map[string]any{"in": map[string]any{"id": id, "historySummary": fmt.Sprint("summary ", n)}},
		})
		req, _ := http.NewRequest(http.MethodPost, s.URL+"/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		s.Authorize(req)
		start := time.Now()
		res, err := client.Do(req)
		if err != nil {
			b.Error(err)
			return 0
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			b.Errorf("status %d", res.StatusCode)
		}
		return time.Since(start)
	}
	for _, id := range ids {
		update(id, 0) // warm the key cache and the connections
	}
	before, _ := logFile.Seek(0, io.SeekCurrent)
	latencies := make([][]time.Duration, clients)
	var wg sync.WaitGroup
	b.ResetTimer()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := c; n < b.N; n += clients {
				latencies[c] = append(latencies[c], update(ids[c], n))
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	after, _ := logFile.Seek(0, io.SeekCurrent)
	all := slices.Concat(latencies...)
	slices.Sort(all)
	b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(after-before)/float64(b.N), "logB/op")
}

// BenchmarkWriteTailFloor is BenchmarkWriteTailWithProductionLogging's load
// without sessiongraph: 8 clients, each committing the same one-row UPDATE
// of its own session straight to PostgreSQL on the server's pool. Its
// p99/p50 is the tail the machine itself gives a durable write at that
// concurrency, to set beside the write path's.
func BenchmarkWriteTailFloor(b *testing.B) {
	const clients = 8
	s := apitest.New(b)
	ids := make([]string, clients)
	for i := range ids {
		opened, err := s.Engine.Sessions.OpenSession(access.System(context.Background()),
			engine.OpenSessionInput{Tenant: "bench", ExternalKey: fmt.Sprint("floor-", i)})
		if err != nil {
			b.Fatal(err)
		}
		ids[i] = opened.Session.ID.String()
	}
	update := func(id string, n int) time.Duration {
		start := time.Now()
		if _, err := s.DB.ExecContext(context.Background(), `UPDATE sessions SET history_summary = $1 WHERE id = $2`, fmt.Sprint("summary ", n), id); err != nil {
			b.Error(err)
		}
		return time.Since(start)
	}
	latencies := make([][]time.Duration, clients)
	var wg sync.WaitGroup
	b.ResetTimer()
	for c := range clients {
		wg.Go(func() {
			for n := c; n < b.N; n += clients {
				latencies[c] = append(latencies[c], update(ids[c], n))
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	all := slices.Concat(latencies...)
	slices.Sort(all)
	b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
}
