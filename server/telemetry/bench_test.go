package telemetry_test

import (
	"context"
	"io"
	"testing"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/server"
	"gatehouse.dev/gatehouse/server/chain"
	"gatehouse.dev/gatehouse/server/telemetry"
)

// discardExporter takes spans and drops them, as an OTLP exporter would send them.
type discardExporter struct{}

func (discardExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardExporter) Shutdown(context.Context) error                             { return nil }

// BenchmarkObservedCheck is a Check through the interceptor, the traced steps and the
// Observer, as extauth wires them (minus gRPC), allowed by a two-step chain:
//   - zpages: no exporter, 1% of Checks recorded for /zpages (the default; today's path)
//   - otlp-1%: an exporter (batching, then dropping), Checks without a parent traced at 1%
//   - otlp-parent-unsampled: Envoy's traceparent says not sampled
//   - decisions: zpages, plus a decision record of every Check to io.Discard
func BenchmarkObservedCheck(b *testing.B) {
	for _, tc := range []struct {
		name      string
		exporting bool
		headers   map[string]string
		decisions bool
	}{
		{name: "zpages"},
		{name: "otlp-1%", exporting: true},
		{name: "otlp-parent-unsampled", exporting: true, headers: map[string]string{"traceparent": "00-" + traceID + "-" + parentSpan + "-00"}},
		{name: "decisions", decisions: true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			opts := []sdktrace.TracerProviderOption{sdktrace.WithSampler(sdktrace.AlwaysSample())}
			if tc.exporting {
				opts = []sdktrace.TracerProviderOption{sdktrace.WithBatcher(discardExporter{}),
					sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample()))}
			}
			tp := sdktrace.NewTracerProvider(opts...)
			defer tp.Shutdown(context.Background())
			reg := prometheus.NewRegistry()
			o := telemetry.Options{Tracer: tp.Tracer("bench"), Ratio: 0.01, Exporting: tc.exporting, Registerer: reg}
			if tc.decisions {
				o.Decisions = telemetry.NewDecisionLog(telemetry.DecisionOptions{Out: io.Discard, Sample: 1, Registerer: reg})
			}
			handler := benchServer(b, o)
			headers := map[string]string{"x-required": "alpha", "user-agent": "Mozilla/5.0", "accept": "*/*"}
			for k, v := range tc.headers {
				headers[k] = v
			}
			req := checkRequest(configID, "/api/v1/items?page=2", headers)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				resp, err := handler(ctx, req)
				if err != nil || resp.GetStatus().GetCode() != 0 {
					b.Fatalf("Check = %v, %v; want OK", resp.GetStatus(), err)
				}
			}
		})
	}
}

// benchServer returns the Check as the gRPC server calls it through the interceptor.
func benchServer(b *testing.B, o telemetry.Options) func(context.Context, *authv3.CheckRequest) (*authv3.CheckResponse, error) {
	obs := telemetry.New(o)
	build := obs.Build(func(_ context.Context, cfg *extauthv1.ExtAuthConfig) (*chain.Chain, error) {
		return &chain.Chain{ID: cfg.GetConfigId(), Steps: []chain.Step{requireHeader{}, stamp{}}, Timeout: 200 * time.Millisecond}, nil
	})
	log := zerolog.New(io.Discard)
	reg := server.NewRegistry(build, log)
	reg.Apply([]*extauthv1.ExtAuthConfig{{ConfigId: configID}}, nil)
	authz := server.NewAuthorizer(reg, log, server.NewMetrics(prometheus.NewRegistry()))
	authz.Observe(obs)
	return func(ctx context.Context, req *authv3.CheckRequest) (*authv3.CheckResponse, error) {
		resp, err := obs.Intercept(ctx, req, nil, func(ctx context.Context, req any) (any, error) {
			return authz.Check(ctx, req.(*authv3.CheckRequest))
		})
		if err != nil {
			return nil, err
		}
		return resp.(*authv3.CheckResponse), nil
	}
}
