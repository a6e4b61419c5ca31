package graph

import (
	"regexp"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/vektah/gqlparser/v2/ast"
)

// Metrics counts and times GraphQL operations for Prometheus.
type Metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// NewMetrics registers the operation metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sessiongraph_graphql_requests_total",
			Help: "GraphQL operations that reached execution, by operation name, type and outcome (ok or the first error's code).",
		}, []string{"operation", "type", "outcome"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sessiongraph_graphql_request_duration_seconds",
			Help:    "Time to answer a query or mutation, by operation name.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, []string{"operation", "type"}),
	}
	reg.MustRegister(m.requests, m.duration)
	return m
}

// count counts an operation once, with its response (admit, fairness.go):
// a query or mutation with its duration, a subscription when it starts. A
// nil Metrics counts nothing.
func (m *Metrics) count(rc *graphql.OperationContext, res *graphql.Response) {
	if m == nil || rc.Operation == nil {
		return
	}
	name := rc.OperationName // the request's operationName, else the document's
	if name == "" {
		name = rc.Operation.Name
	}
	name, kind := operationLabel(name), string(rc.Operation.Operation)
	outcome := "ok"
	if res != nil && len(res.Errors) > 0 {
		outcome = "error"
		if code, ok := res.Errors[0].Extensions["code"].(string); ok {
			outcome = code
		}
	}
	m.requests.WithLabelValues(name, kind, outcome).Inc()
	if rc.Operation.Operation != ast.Subscription {
		m.duration.WithLabelValues(name, kind).Observe(time.Since(rc.Stats.OperationStart).Seconds())
	}
}

var labelSafe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// operationLabel keeps label cardinality bounded by well-formed names.
func operationLabel(name string) string {
	switch {
	case name == "":
		return "anonymous"
	case labelSafe.MatchString(name):
		return name
	}
	return "invalid_name"
}
