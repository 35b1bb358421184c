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

// New returns a Tracing that records the share ratio (0 to 1) of its root spans, and
// a child span exactly when its parent is recorded. A span that is not recorded costs
// little; a recorded one costs a few microseconds, which on a request path serving
// every request of a gateway is worth sampling down.
func New(ratio float64) *Tracing {
	sp := zpages.NewSpanProcessor()
	sampler := sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler), sdktrace.WithSpanProcessor(sp))
	return &Tracing{provider: tp, spans: sp}
}

// Tracer returns the named tracer.
func (t *Tracing) Tracer(name string) trace.Tracer { return t.provider.Tracer(name) }

// Handler serves zpages' tracez page (?zspanname=NAME&ztype=0|1|2 for samples).
func (t *Tracing) Handler() http.Handler { return zpages.NewTracezHandler(t.spans) }

// Close ends the provider.
func (t *Tracing) Close() error { return t.provider.Shutdown(context.Background()) }
