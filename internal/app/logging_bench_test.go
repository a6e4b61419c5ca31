package app_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
)

// BenchmarkRequestWithProductionLogging serves requests through the whole
// handler, logging as production does (JSON at info) to a file, as stderr
// redirected by a supervisor is: a small authenticated query, and /healthz,
// where the access log is most of the work. It reports the log bytes each
// request costs; at 2,800 requests/s, 180 B/request is 0.5 MB/s.
func BenchmarkRequestWithProductionLogging(b *testing.B) {
	logFile, err := os.Create(filepath.Join(b.TempDir(), "server.log"))
	if err != nil {
		b.Fatal(err)
	}
	defer logFile.Close()
	s := apitest.New(b, func(c *app.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(logFile, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
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
