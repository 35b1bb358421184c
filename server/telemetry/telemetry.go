// Package telemetry is what extauth tells the tools people run about its Checks: a
// span per Check with a child per step (for /zpages, and over OTLP inside Envoy's trace
// when an exporter is configured), latency and decision metrics, and decision logs. It
// wraps the server from outside: a gRPC interceptor for the Check, a decorator around
// each step a chain is built with, and a server.Observer told what each Check decided.
package telemetry

import (
	"context"
	"math/rand/v2"
	"strconv"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"

	"gatehouse.dev/gatehouse/server"
)

// Options shape an Observer.
type Options struct {
	// Tracer makes the spans.
	Tracer trace.Tracer
	// Ratio is the share of Checks (0 to 1) traced when no parent decides.
	Ratio float64
	// Exporting says spans leave the process: a Check then continues the trace whose
	// W3C traceparent or B3 headers Envoy sent, traced when the parent was sampled
	// and not otherwise; a Check without a parent is traced at Ratio.
	Exporting bool
	// SamplerDecides, with Exporting, leaves every decision to Tracer's sampler
	// (OTEL_TRACES_SAMPLER), which then sees every Check.
	SamplerDecides bool
	// Registerer takes the metrics.
	Registerer prometheus.Registerer
	// Decisions, when set, writes a record of the Checks it samples.
	Decisions *DecisionLog
}

// Observer gives extauth's Checks their spans, metrics and decision records.
type Observer struct {
	tracer trace.Tracer
	// ratio is the share of Checks traced. The decision is made here, before the
	// tracer is asked for a span: even a span the SDK drops costs IDs, a context and
	// allocations that every untraced Check would pay.
	ratio          float64
	exporting      bool
	samplerDecides bool
	metrics        *metrics
	decisions      *DecisionLog
}

// New returns an Observer. Register it with Interceptor, Build and
// server.Authorizer.Observe.
func New(o Options) *Observer {
	return &Observer{tracer: o.Tracer, ratio: o.Ratio, exporting: o.Exporting, samplerDecides: o.SamplerDecides,
		metrics: newMetrics(o.Registerer), decisions: o.Decisions}
}

// Interceptor is the server option that gives Checks their spans (Intercept).
func (o *Observer) Interceptor() grpc.ServerOption {
	return grpc.ChainUnaryInterceptor(o.Intercept)
}

// Intercept is the span of one Check (its config_id, and what Decided adds), the
// Check's latency, and the start of its decision record when it is sampled.
func (o *Observer) Intercept(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
	start := time.Now()
	r, _ := req.(*authv3.CheckRequest)
	id := r.GetAttributes().GetContextExtensions()[server.ConfigIDKey]
	defer func() { o.metrics.check(id, time.Since(start)) }()
	if o.decisions != nil {
		if rec := o.decisions.sample(id); rec != nil {
			ctx = context.WithValue(ctx, recordKey{}, rec)
		}
	}
	ctx, span := o.startCheck(ctx, r, id)
	if span == nil {
		return next(ctx, req)
	}
	defer span.End()
	resp, err := next(ctx, req)
	if err != nil {
		span.SetStatus(codes.Error, "check failed")
	} else if r, ok := resp.(*authv3.CheckResponse); ok {
		span.SetAttributes(attribute.String("grpc_status", strconv.Itoa(int(r.GetStatus().GetCode()))))
	}
	return resp, err
}

// startCheck opens the Check's span, or returns a nil span when the Check is not traced.
func (o *Observer) startCheck(ctx context.Context, r *authv3.CheckRequest, id string) (context.Context, trace.Span) {
	if o.exporting {
		carrier := traceCarrier(ctx, r)
		if sampled, known := parentSampled(carrier); known && !sampled && !o.samplerDecides {
			return ctx, nil // the parent's decision, read without the allocations of extracting it
		}
		ctx = propagator.Extract(ctx, carrier)
		if parent := trace.SpanContextFromContext(ctx); !o.samplerDecides &&
			(parent.IsValid() && !parent.IsSampled() || !parent.IsValid() && !o.sampled()) {
			return ctx, nil
		}
	} else if !o.sampled() {
		return ctx, nil
	}
	return o.tracer.Start(ctx, "extauth.Check", trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("config_id", id)))
}

func (o *Observer) sampled() bool {
	return o.ratio >= 1 || o.ratio > 0 && rand.Float64() < o.ratio
}

// Decided implements server.Observer: the span's outcome, the denial counters and the
// decision record.
func (o *Observer) Decided(ctx context.Context, d server.Decision) {
	if !d.Allowed() {
		o.metrics.denied(d)
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(attribute.String("outcome", d.Outcome), attribute.String("deciding_step", d.Step),
			attribute.Int("http_status", d.Status))
		if d.Err != nil {
			span.SetStatus(codes.Error, d.Outcome)
		}
	}
	if o.decisions == nil {
		return
	}
	if rec, ok := ctx.Value(recordKey{}).(*record); ok {
		o.decisions.write(ctx, rec, &d)
	}
}
