package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"

	"sessiongraph/dashboard"
	"sessiongraph/graphiql"
	"sessiongraph/internal/access"
	"sessiongraph/internal/apperr"
	"sessiongraph/internal/tracing"
	"sessiongraph/migrations"
)

func (a *App) routes(gql, mcp http.Handler) http.Handler {
	mux := http.NewServeMux()
	// Every operation passes one admission behind the door, whatever its
	// transport (access.Admission); doors_test.go lists them.
	a.doors = map[string]http.Handler{"/graphql": gql, "/mcp": mcp}
	mux.Handle("/graphql", a.door(gql, graphqlEntrance))
	mux.Handle("/mcp", a.door(mcp, headerEntrance))
	mux.Handle("GET /graphiql", a.door(graphiql.Handler(), openEntrance))
	mux.Handle("GET /graphiql/", a.door(graphiql.Handler(), openEntrance))
	mux.Handle("GET /healthz", a.door(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("ok\n"))
	}), openEntrance))
	mux.Handle("GET /readyz", a.door(http.HandlerFunc(a.ready), openEntrance))
	// On the API port, metrics are for an ADMIN key only; a scraper without
	// one reads them on -metrics-listen (MetricsHandler).
	mux.Handle("GET /metrics", a.door(requireAdmin(a.MetricsHandler()), headerEntrance))
	mux.Handle("/", a.door(dashboard.Handler(), openEntrance))
	var h http.Handler = mux
	if tp := a.cfg.TracerProvider; tp != nil {
		// Outermost, so that the access log carries the trace id; joins the
		// caller's trace from its traceparent header.
		h = otelhttp.NewHandler(h, "http", otelhttp.WithTracerProvider(tp), otelhttp.WithPropagators(tracing.Propagator()),
			otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method + " " + r.URL.Path }))
	}
	return h
}

// Doors are the routes operations come in by, each with the handler behind
// its door: the test of the doors (doors_test.go) has a row for each way
// in, and fails on one it does not know.
func (a *App) Doors() map[string]http.Handler { return a.doors }

// MetricsHandler serves the server's metrics to anyone who reaches it:
// server.go serves it alone on -metrics-listen, an address an operator
// keeps private.
func (a *App) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(a.metrics, promhttp.HandlerOpts{})
}

// requireAdmin lets only an ADMIN key's request through: the metrics name
// operations and tenants' traffic, for operators only.
func requireAdmin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := access.RequireAdmin(r.Context(), "/metrics"); err != nil {
			status := http.StatusForbidden
			if apperr.CodeOf(err) == apperr.Unauthenticated {
				status = http.StatusUnauthorized
			}
			writeError(w, status, apperr.CodeOf(err), messageOf(err))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ready answers 200 when the database answers and carries the newest
// migration, so that a load balancer sends nothing to a replica that cannot
// serve yet, and 503 once the replica drains (it is shutting down).
func (a *App) ready(w http.ResponseWriter, r *http.Request) {
	if a.Draining() {
		http.Error(w, "draining: this replica is shutting down", http.StatusServiceUnavailable)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	want, err := migrations.Latest()
	if err != nil {
		http.Error(w, "migrations unreadable: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	started := a.outage.now()
	have, dirty, err := migrations.Status(ctx, a.DB)
	switch {
	case err != nil && databaseUnreachable(err) && ctx.Err() == nil:
		a.outage.failed(started, err)
		http.Error(w, "database not ready: "+err.Error(), http.StatusServiceUnavailable)
	case err != nil:
		http.Error(w, "database not ready: "+err.Error(), http.StatusServiceUnavailable)
	case dirty || have != want:
		http.Error(w, "database schema not at the latest migration", http.StatusServiceUnavailable)
	default:
		a.outage.reached(started)
		w.Write([]byte("ready\n"))
	}
}

type requestIDKey struct{}

// RequestID returns the id the server gave the request, for log lines.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// received gives a request its id (echoed as X-Request-Id) and a recorder
// of its status, for logRequest once it is done.
func (a *App) received(w http.ResponseWriter, r *http.Request) (*statusRecorder, *http.Request, time.Time) {
	id := r.Header.Get("X-Request-Id")
	if id == "" || len(id) > 64 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		id = hex.EncodeToString(b[:])
	}
	w.Header().Set("X-Request-Id", id)
	return &statusRecorder{ResponseWriter: w, status: http.StatusOK}, r.WithContext(context.WithValue(r.Context(), requestIDKey{}, id)),
		time.Now()
}

// logRequest counts a request in /metrics by route and status, and logs it
// at the level its outcome deserves (accessLevel). A line per successful
// request, at info, cost 0.5 MB/s of log at 2,800 requests/s and was one
// suspect of the write path's tail: the totals live in the metrics instead.
func (a *App) logRequest(rec *statusRecorder, r *http.Request, start time.Time) {
	elapsed := time.Since(start)
	// The mux records the pattern it matched on the request it routed.
	a.httpRequests.count(r.Pattern, rec.status)
	level := accessLevel(rec.status, elapsed, a.cfg.SlowRequest, isStream(r))
	if rec.status == http.StatusServiceUnavailable && a.outage.isDown() {
		level = slog.LevelDebug // the outage was logged once, when it began
	}
	if !a.log.Enabled(r.Context(), level) {
		return
	}
	a.log.LogAttrs(r.Context(), level, "request",
		slog.String("request_id", RequestID(r.Context())), slog.String("method", r.Method), slog.String("path", r.URL.Path),
		slog.Int("status", rec.status), slog.Duration("duration", elapsed))
}

// accessLevel is the level a finished request is logged at: error for a
// 5xx (a bug or an outage), warn for a slow request, info for a 4xx (a
// client to help) but a 429, debug for the rest. A subscription stream is
// long by nature, never slow. A key over its limits is refused thousands
// of times a second: the metrics count its 429s, a line each would be a
// flood of its own.
func accessLevel(status int, elapsed, slow time.Duration, stream bool) slog.Level {
	switch {
	case status >= 500:
		return slog.LevelError
	case status == http.StatusTooManyRequests:
		return slog.LevelDebug
	case elapsed >= slow && !stream:
		return slog.LevelWarn
	case status >= 400:
		return slog.LevelInfo
	}
	return slog.LevelDebug
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the writer's Flush and Hijack,
// which SSE and WebSocket need.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Flush lets the SSE transport stream through the recorder.
func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
