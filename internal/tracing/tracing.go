// Package tracing exports OpenTelemetry traces when an OTLP endpoint is
// configured: one span per HTTP request (joining the caller's trace from
// its traceparent header), one per GraphQL operation and root field, and
// one per database statement. Unconfigured, every span is a no-op.
package tracing

import (
	"context"
	"fmt"
	"os"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Name is the instrumentation scope of sessiongraph's own spans.
const Name = "sessiongraph"

// Configured reports whether the standard OTLP environment names an
// endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or its traces-only variant).
func Configured() bool {
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Exporter returns a TracerProvider exporting over OTLP/HTTP as the
// standard OTEL_* environment variables say (endpoint, headers, TLS), and
// the function that flushes and stops it.
func Exporter(ctx context.Context) (trace.TracerProvider, func(context.Context) error, error) {
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, read last, win.
	res, err := resource.New(ctx, resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", "sessiongraph")), resource.WithFromEnv())
	if err != nil {
		return nil, nil, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return tp, tp.Shutdown, nil
}

// Provider returns tp, or a no-op provider when tp is nil.
func Provider(tp trace.TracerProvider) trace.TracerProvider {
	if tp == nil {
		return noop.NewTracerProvider()
	}
	return tp
}

// Propagator reads and writes W3C traceparent and baggage headers.
func Propagator() propagation.TextMapPropagator {
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
}

func init() {
	// Libraries that use the global propagator (otelhttp) agree with ours.
	otel.SetTextMapPropagator(Propagator())
}
