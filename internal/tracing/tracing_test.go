package tracing_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"sessiongraph/internal/tracing"
)

// TestExporterSendsToTheConfiguredEndpoint points the standard OTLP
// environment at a collector of our own and checks that a span arrives.
func TestExporterSendsToTheConfiguredEndpoint(t *testing.T) {
	received := make(chan string, 10)
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		received <- r.URL.Path + " " + string(body)
		w.WriteHeader(http.StatusOK)
	}))
	defer collector.Close()

	assert.False(t, tracing.Configured())
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.URL)
	require.True(t, tracing.Configured())

	tp, shutdown, err := tracing.Exporter(context.Background())
	require.NoError(t, err)
	_, sp := tp.Tracer("test").Start(context.Background(), "the-span")
	sp.End()
	require.NoError(t, shutdown(context.Background()), "shutdown flushes")

	got := <-received
	assert.Contains(t, got, "/v1/traces ")
	assert.Contains(t, got, "the-span")
	assert.Contains(t, got, "sessiongraph", "the service name")
}
