package app

import (
	"context"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// newRegistry gathers the server's metrics in a registry of its own (so
// that several servers in one process, as in tests, do not collide): the Go
// runtime and process, the database pool, live subscriptions, event lag and
// PostgreSQL's NOTIFY queue.
func (a *App) newRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	a.httpRequests = httpRequests{prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sessiongraph_http_requests_total",
		Help: "HTTP requests by route (the pattern that served them) and status.",
	}, []string{"route", "status"})}
	reg.MustRegister(
		a.httpRequests.vec,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewDBStatsCollector(a.DB, "sessiongraph"),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "sessiongraph_subscriptions_active",
			Help: "Live subscriptions of clients on this replica.",
		}, func() float64 { return float64(a.ClientSubscriptions()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "sessiongraph_event_lag_seconds",
			Help: "How long after its commit the last event was published to this replica's subscribers.",
		}, func() float64 { return a.Hub.Lag().Seconds() }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "sessiongraph_notification_queue_usage_ratio",
			Help: "PostgreSQL's NOTIFY queue in use (0 to 1); near 1, doorbells fail.",
		}, a.notificationQueueUsage),
	)
	return reg
}

func (a *App) notificationQueueUsage() float64 {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var usage float64
	if err := a.DB.QueryRowContext(ctx, `SELECT pg_notification_queue_usage()`).Scan(&usage); err != nil {
		return -1
	}
	return usage
}

// httpRequests counts every HTTP request, which the access log at info no
// longer lists one by one.
type httpRequests struct{ vec *prometheus.CounterVec }

// count adds one request; route is the mux pattern ("" when none matched).
func (h httpRequests) count(route string, status int) {
	if route == "" {
		route = "unmatched"
	}
	h.vec.WithLabelValues(route, strconv.Itoa(status)).Inc()
}
