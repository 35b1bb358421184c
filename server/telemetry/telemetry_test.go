package telemetry_test

import (
	"context"
	"testing"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/pluginapi"
	"gatehouse.dev/gatehouse/server/chain"
	"gatehouse.dev/gatehouse/server/telemetry"
)

// TestTraceSampleRatio: the observer records the share of Checks it is given, and a
// Check it does not trace reaches the handler without a span.
func TestTraceSampleRatio(t *testing.T) {
	const checks = 2000
	for _, tc := range []struct {
		name     string
		ratio    float64
		min, max int // recorded Check spans; wide bounds for the random share
	}{
		{name: "none", ratio: 0, min: 0, max: 0},
		{name: "every", ratio: 1, min: checks, max: checks},
		{name: "half", ratio: 0.5, min: checks * 3 / 10, max: checks * 7 / 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			o := telemetry.New(telemetry.Options{Tracer: tp.Tracer("test"), Ratio: tc.ratio, Registerer: prometheus.NewRegistry()})
			var untraced int
			next := func(ctx context.Context, _ any) (any, error) {
				if !traceRecording(ctx) {
					untraced++
				}
				return &authv3.CheckResponse{}, nil
			}
			for range checks {
				if _, err := o.Intercept(context.Background(), &authv3.CheckRequest{}, nil, next); err != nil {
					t.Fatal(err)
				}
			}
			got := len(rec.Ended())
			if got < tc.min || got > tc.max {
				t.Errorf("%d of %d Checks recorded with ratio %g, want %d to %d", got, checks, tc.ratio, tc.min, tc.max)
			}
			if got+untraced != checks {
				t.Errorf("%d recorded + %d untraced != %d Checks", got, untraced, checks)
			}
		})
	}
}

func traceRecording(ctx context.Context) bool { return trace.SpanFromContext(ctx).IsRecording() }

// TestStepSeriesOnFirstCall: building chains makes no latency series (10,000 configs
// would hold 10,000 histograms, most never used); a step's first call makes its
// series, and later calls add to it.
func TestStepSeriesOnFirstCall(t *testing.T) {
	reg := prometheus.NewRegistry()
	o := telemetry.New(telemetry.Options{Tracer: noop.NewTracerProvider().Tracer("test"), Registerer: reg})
	build := o.Build(func(_ context.Context, cfg *extauthv1.ExtAuthConfig) (*chain.Chain, error) {
		return &chain.Chain{ID: cfg.GetConfigId(), Steps: []chain.Step{allowStep{}}}, nil
	})
	var chains []*chain.Chain
	for _, id := range []string{"ns.a", "ns.b"} {
		c, err := build(context.Background(), &extauthv1.ExtAuthConfig{ConfigId: id})
		if err != nil {
			t.Fatal(err)
		}
		chains = append(chains, c)
	}
	const name = "gatehouse_extauth_step_seconds"
	counts := func() map[string]uint64 {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]uint64{}
		for _, mf := range mfs {
			if mf.GetName() != name {
				continue
			}
			for _, m := range mf.GetMetric() {
				labels := ""
				for _, l := range m.GetLabel() {
					labels += l.GetName() + "=" + l.GetValue() + " "
				}
				out[labels] = m.GetHistogram().GetSampleCount()
			}
		}
		return out
	}
	if diff := cmp.Diff(map[string]uint64{}, counts()); diff != "" {
		t.Errorf("series after building (-want +got):\n%s", diff)
	}
	for range 3 {
		out := chains[0].Run(context.Background(), &pluginapi.AuthorizationRequest{})
		if out.Err != nil {
			t.Fatal(out.Err)
		}
		out.Release()
	}
	if diff := cmp.Diff(map[string]uint64{"config_id=ns.a step=step/allow ": 3}, counts()); diff != "" {
		t.Errorf("series after three calls of ns.a's step (-want +got):\n%s", diff)
	}
}

type allowStep struct{}

func (allowStep) Name() string { return "step/allow" }

func (allowStep) Authorize(context.Context, *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
	return &pluginapi.AuthorizationResponse{Allowed: true}, nil
}
