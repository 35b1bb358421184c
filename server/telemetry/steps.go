package telemetry

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/pluginapi"
	"gatehouse.dev/gatehouse/server"
	"gatehouse.dev/gatehouse/server/chain"
)

// Build wraps every step of the chains b builds in a span, and times them through the
// chain (one clock reading a step) for the step latency histogram and the decision
// records; the decision log takes the config's own share of records, if it sets one.
func (o *Observer) Build(b server.BuildFunc) server.BuildFunc {
	return func(ctx context.Context, cfg *extauthv1.ExtAuthConfig) (*chain.Chain, error) {
		c, err := b(ctx, cfg)
		if err != nil || c == nil {
			return c, err
		}
		if o.decisions != nil {
			o.decisions.setConfigShare(ctx, c.ID, cfg.DecisionLogSampleRatio)
		}
		// A step's latency series is made on its first call: a histogram holds a count
		// per bucket and its labels, and of many configs most may never serve a Check.
		hists := make([]atomic.Pointer[prometheus.Observer], len(c.Steps))
		id, steps := c.ID, c.Steps
		for i, s := range steps {
			steps[i] = &tracedStep{Step: s, o: o, kind: kindOf(s)}
		}
		c.OnStep = func(ctx context.Context, i int, took time.Duration) {
			h := hists[i].Load()
			if h == nil {
				// Two first calls at once get the same series from the vector.
				obs := o.metrics.steps.WithLabelValues(id, steps[i].Name())
				h = &obs
				hists[i].Store(h)
			}
			observe(ctx, *h, took)
			if o.decisions == nil {
				return
			}
			if rec, ok := ctx.Value(recordKey{}).(*record); ok {
				rec.step(steps[i].Name(), took)
			}
		}
		return c, nil
	}
}

// observe adds took to h, with the trace id as exemplar when the Check is traced.
func observe(ctx context.Context, h prometheus.Observer, took time.Duration) {
	if sc := trace.SpanContextFromContext(ctx); sc.IsSampled() {
		if eo, ok := h.(prometheus.ExemplarObserver); ok {
			eo.ObserveWithExemplar(took.Seconds(), prometheus.Labels{"trace_id": sc.TraceID().String()})
			return
		}
	}
	h.Observe(took.Seconds())
}

// Step kinds, as the "kind" span attribute.
const (
	kindPlugin  = "plugin"
	kindBuiltIn = "built-in"
)

func kindOf(s chain.Step) string {
	if f, ok := s.(interface{ File() string }); ok && f.File() != "" {
		return kindPlugin
	}
	return kindBuiltIn
}

// tracedStep is a step with a span when its Check is traced.
type tracedStep struct {
	chain.Step
	o    *Observer
	kind string
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
	ctx, span := s.o.tracer.Start(ctx, "extauth.step", trace.WithAttributes(
		attribute.String("step", s.Name()), attribute.String("kind", s.kind)))
	resp, err := s.Step.Authorize(ctx, req)
	switch {
	case err != nil:
		span.SetAttributes(attribute.String("outcome", "error"))
		span.SetStatus(codes.Error, "step failed")
	case resp != nil:
		outcome := "denied"
		if resp.Allowed {
			outcome = "allowed"
		}
		span.SetAttributes(attribute.Bool("allowed", resp.Allowed), attribute.String("outcome", outcome))
	}
	span.End()
	return resp, err
}
