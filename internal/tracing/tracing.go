// Package tracing sets up OpenTelemetry export and gives stages a way to
// mark points in a request's span. With tracing off, every call here is a
// no-op on a non-recording span.
package tracing

import (
	"context"
	"fmt"
	"os"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/kpipe/kpipe/config"
)

// ServiceName is what spans are reported under, kube-apiserver's name.
const ServiceName = "apiserver"

// NewProvider exports spans over OTLP/gRPC to cfg.Endpoint (host:port, as
// kube's TracingConfiguration), sampling cfg.SamplingRatePerMillion of the
// requests that carry no sampled parent. Connection errors surface in the
// exporter's logs, never in requests.
func NewProvider(ctx context.Context, cfg config.Tracing) (*sdktrace.TracerProvider, error) {
	exp, err := otlptracegrpc.New(ctx,
		otlptracegrpc.WithEndpoint(cfg.Endpoint),
		// kube talks plaintext gRPC to a collector beside it.
		otlptracegrpc.WithInsecure(),
	)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	host, _ := os.Hostname()
	res := resource.NewWithAttributes(semconv.SchemaURL,
		semconv.ServiceName(ServiceName),
		semconv.ServiceInstanceID(host),
	)
	sampler := sdktrace.ParentBased(sdktrace.TraceIDRatioBased(float64(cfg.SamplingRatePerMillion) / 1e6))
	return sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sampler),
	), nil
}

// Event marks a point in the request's current span, as kube's create
// path does ("About to store object in database").
func Event(ctx context.Context, name string, attrs ...attribute.KeyValue) {
	span := trace.SpanFromContext(ctx)
	if span.IsRecording() {
		span.AddEvent(name, trace.WithAttributes(attrs...))
	}
}
