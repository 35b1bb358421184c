// Package telemetry is extauth's tracing and step metrics: a span per Check with a
// child per step, for /zpages, and a latency histogram per step, for /metrics. It
// wraps the server from outside: a gRPC interceptor for the Check, a decorator around
// each step a chain is built with.
package telemetry

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/pluginapi"
	"gatehouse.dev/gatehouse/server"
	"gatehouse.dev/gatehouse/server/chain"
)

// Observer gives extauth's Checks a span each, with a child per step, and times every
// step.
type Observer struct {
	tracer trace.Tracer
	// ratio is the share of Checks traced. The decision is made here, before the
	// tracer is asked for a span: even a span the SDK drops costs IDs, a context and
	// allocations, about a microsecond that every untraced Check would pay.
	ratio float64
	steps *prometheus.HistogramVec
}

// New returns an Observer that traces the share ratio of Checks with tracer and
// registers the step latency histograms with reg.
func New(tracer trace.Tracer, ratio float64, reg prometheus.Registerer) *Observer {
	o := &Observer{tracer: tracer, ratio: ratio, steps: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "gatehouse_extauth_step_seconds",
		Help:    "Time one step took to decide a request, by config_id and step; a series appears with its step's first call.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10),
	}, []string{"config_id", "step"})}
	reg.MustRegister(o.steps)
	return o
}

// Interceptor is the server option that gives Checks their spans (Intercept).
func (o *Observer) Interceptor() grpc.ServerOption {
	return grpc.ChainUnaryInterceptor(o.Intercept)
}

// Intercept is the span of one Check: its config_id and the status answered.
func (o *Observer) Intercept(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
	if o.ratio <= 0 || o.ratio < 1 && rand.Float64() >= o.ratio {
		return next(ctx, req)
	}
	ctx, span := o.tracer.Start(ctx, "extauth.Check")
	defer span.End()
	if r, ok := req.(*authv3.CheckRequest); ok {
		span.SetAttributes(attribute.String("config_id", r.GetAttributes().GetContextExtensions()[server.ConfigIDKey]))
	}
	resp, err := next(ctx, req)
	if err != nil {
		span.SetStatus(codes.Error, "check failed")
	} else if r, ok := resp.(*authv3.CheckResponse); ok {
		span.SetAttributes(attribute.String("grpc_status", strconv.Itoa(int(r.GetStatus().GetCode()))))
	}
	return resp, err
}

// Build wraps every step of the chains b builds in a span, and times them through the
// chain (one clock reading a step; the clock can cost a few hundred nanoseconds on a
// virtual machine).
func (o *Observer) Build(b server.BuildFunc) server.BuildFunc {
	return func(ctx context.Context, cfg *extauthv1.ExtAuthConfig) (*chain.Chain, error) {
		c, err := b(ctx, cfg)
		if err != nil || c == nil {
			return c, err
		}
		// A step's latency series is made on its first call: a histogram is ~1.7 kB of
		// buckets and labels, and of 10,000 configs most may never serve a Check.
		hists := make([]atomic.Pointer[prometheus.Observer], len(c.Steps))
		id, steps := c.ID, c.Steps
		for i, s := range steps {
			steps[i] = &tracedStep{Step: s, o: o}
		}
		c.OnStep = func(i int, took time.Duration) {
			h := hists[i].Load()
			if h == nil {
				// Two first calls at once get the same series from the vector.
				obs := o.steps.WithLabelValues(id, steps[i].Name())
				h = &obs
				hists[i].Store(h)
			}
			(*h).Observe(took.Seconds())
		}
		return c, nil
	}
}

// tracedStep is a step with a span when its Check is traced.
type tracedStep struct {
	chain.Step
	o *Observer
}

// File forwards the plugin file a step runs, which stuck-call reports name.
func (s *tracedStep) File() string {
	if f, ok := s.Step.(interface{ File() string }); ok {
		return f.File()
	}
	return ""
}

func (s *tracedStep) Authorize(ctx context.Context, req *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
	if !trace.SpanFromContext(ctx).IsRecording() {
		// The Check was not sampled: its steps are not either, and skipping the
		// tracer altogether saves the per-step allocations of a span nobody keeps.
		return s.Step.Authorize(ctx, req)
	}
	ctx, span := s.o.tracer.Start(ctx, "extauth.step", trace.WithAttributes(attribute.String("step", s.Name())))
	resp, err := s.Step.Authorize(ctx, req)
	switch {
	case err != nil:
		span.SetStatus(codes.Error, "step failed")
	case resp != nil:
		span.SetAttributes(attribute.Bool("allowed", resp.Allowed))
	}
	span.End()
	return resp, err
}
