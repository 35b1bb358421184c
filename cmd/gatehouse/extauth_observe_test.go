package main

import (
	"context"
	"testing"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"github.com/prometheus/client_golang/prometheus"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
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
			o := newExtauthObserver(tp.Tracer("test"), tc.ratio, prometheus.NewRegistry())
			var untraced int
			next := func(ctx context.Context, _ any) (any, error) {
				if !traceRecording(ctx) {
					untraced++
				}
				return &authv3.CheckResponse{}, nil
			}
			for range checks {
				if _, err := o.intercept(context.Background(), &authv3.CheckRequest{}, nil, next); err != nil {
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
