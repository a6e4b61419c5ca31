package app_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"sessiongraph/internal/apitest"
	"sessiongraph/internal/app"
)

// TestTracesJoinTheCallersTrace sends a query with a traceparent header and
// finds, in that trace, the HTTP span, the operation, its root field and
// the statements it ran, without their arguments.
func TestTracesJoinTheCallersTrace(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	s := apitest.New(t, func(c *app.Config) { c.TracerProvider = tp })

	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	req, err := http.NewRequest(http.MethodPost, s.URL+"/graphql",
		strings.NewReader(`{"query":"query SessionPage { sessions(where: {tenant: \"secret-tenant\"}) { totalCount } }"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	s.Authorize(req)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)

	names := map[string]bool{}
	for _, sp := range spans.GetSpans() {
		if sp.SpanContext.TraceID().String() != traceID {
			continue
		}
		names[sp.Name] = true
		for _, a := range sp.Attributes {
			assert.NotContains(t, a.Value.Emit(), "secret-tenant", "statement arguments are not recorded")
			assert.NotContains(t, a.Value.Emit(), s.AdminKey, "the key is not recorded")
		}
	}
	for _, want := range []string{"POST /graphql", "query SessionPage", "Query.sessions", "db.query"} {
		assert.True(t, names[want], "span %q in the caller's trace; got %v", want, names)
	}
}
