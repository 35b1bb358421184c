// Package tracing is a process's OpenTelemetry export: its tracer provider, whose recent
// spans are kept in memory for the admin server's /zpages (zpages' tracez: running
// spans, latency buckets, errors) and, when the standard OTEL_EXPORTER_OTLP_* variables
// name an endpoint, exported over OTLP (gRPC or HTTP); and an OTLP logger.
package tracing

import (
	"context"
	"net/http"

	"go.opentelemetry.io/contrib/zpages"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Tracing is a tracer provider whose spans /zpages shows and an OTLP exporter, if
// configured, sends.
type Tracing struct {
	provider  *sdktrace.TracerProvider
	spans     *zpages.SpanProcessor
	exporting bool
}

// Options shape New.
type Options struct {
	// Service is the service.name resource attribute unless OTEL_SERVICE_NAME or
	// OTEL_RESOURCE_ATTRIBUTES say otherwise.
	Service string
}

// New returns a Tracing. Without an OTLP exporter configured (Exporter) it records every
// span it is asked for, for /zpages only: callers on a hot path decide which requests
// to trace before asking (a span the SDK drops still costs its IDs and allocations).
// With one, the sampler is OTEL_TRACES_SAMPLER's (SamplerFromEnv) or else
// parentbased_always_on: a parent's decision (Envoy's) is followed, and callers decide
// about spans without a parent as above.
func New(ctx context.Context, o Options) (*Tracing, error) {
	sp := zpages.NewSpanProcessor()
	opts := []sdktrace.TracerProviderOption{sdktrace.WithSpanProcessor(sp)}
	exp, err := Exporter(ctx)
	if err != nil {
		return nil, err
	}
	if exp == nil {
		opts = append(opts, sdktrace.WithSampler(sdktrace.AlwaysSample()))
	} else {
		res, err := serviceResource(ctx, o)
		if err != nil {
			return nil, err
		}
		opts = append(opts, sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		if envSampler() == "" {
			opts = append(opts, sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample())))
		}
	}
	tp := sdktrace.NewTracerProvider(opts...)
	return &Tracing{provider: tp, spans: sp, exporting: exp != nil}, nil
}

// SamplerFromEnv says whether OTEL_TRACES_SAMPLER chose the sampler of an exporting
// Tracing: callers then leave every decision to it.
func (t *Tracing) SamplerFromEnv() bool { return t.exporting && envSampler() != "" }

// Exporting says whether spans leave the process (an OTLP exporter is configured).
func (t *Tracing) Exporting() bool { return t.exporting }

// Tracer returns the named tracer.
func (t *Tracing) Tracer(name string) trace.Tracer { return t.provider.Tracer(name) }

// Handler serves zpages' tracez page (?zspanname=NAME&ztype=0|1|2 for samples).
func (t *Tracing) Handler() http.Handler { return zpages.NewTracezHandler(t.spans) }

// Close sends the spans still batched and ends the provider.
func (t *Tracing) Close() error { return t.provider.Shutdown(context.Background()) }
