package main

import (
	"context"
	"net"
	"net/http"
	"time"
)

// serveMetrics serves h at /metrics alone on addr (-metrics-listen), for a
// scraper on a private network: nothing else of the API is reachable there.
// It returns the address it listens on and what stops it.
func serveMetrics(addr string, h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return ln.Addr().String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}
