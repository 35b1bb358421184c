// Package tracing keeps the process's recent OpenTelemetry spans in memory for the
// admin server's /zpages (zpages' tracez: running spans, latency buckets, errors).
// Nothing is exported anywhere else.
package tracing

import (
	"context"
	"net/http"

	"go.opentelemetry.io/contrib/zpages"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Tracing is a tracer provider whose spans /zpages shows.
type Tracing struct {
	provider *sdktrace.TracerProvider
	spans    *zpages.SpanProcessor
}

// New returns a Tracing that records every span it is asked for; callers on a hot
// path decide which requests to trace before asking (a span the SDK drops still
// costs its IDs and allocations).
func New() *Tracing {
	sp := zpages.NewSpanProcessor()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSpanProcessor(sp))
	return &Tracing{provider: tp, spans: sp}
}

// Tracer returns the named tracer.
func (t *Tracing) Tracer(name string) trace.Tracer { return t.provider.Tracer(name) }

// Handler serves zpages' tracez page (?zspanname=NAME&ztype=0|1|2 for samples).
func (t *Tracing) Handler() http.Handler { return zpages.NewTracezHandler(t.spans) }

// Close ends the provider.
func (t *Tracing) Close() error { return t.provider.Shutdown(context.Background()) }
