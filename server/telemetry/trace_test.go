package telemetry_test

import (
	"context"
	"strings"
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"github.com/google/go-cmp/cmp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"google.golang.org/grpc/metadata"

	"gatehouse.dev/gatehouse/server/telemetry"
)

const (
	traceID    = "4bf92f3577b34da6a3ce929d0e0e4736"
	parentSpan = "00f067aa0ba902b7"
	clientSpan = "b7ad6b7169203331" // the downstream client's, in the request headers
)

// TestCheckContinuesEnvoysTrace: with an exporter, a Check continues the trace whose
// context Envoy sent, W3C or B3, in the call's gRPC metadata (Envoy tracing the request)
// or else in the request headers, and follows its sampling decision; its steps are its
// children. A Check without a parent is traced at the configured ratio.
func TestCheckContinuesEnvoysTrace(t *testing.T) {
	for _, tc := range []struct {
		name    string
		headers map[string]string
		raw     bool // headers in header_map, as Envoy's encode_raw_headers sends them
		// md is the call's gRPC metadata, where Envoy sends its ext_authz span's context
		// when it traces the request.
		md    map[string]string
		ratio float64
		// wantParent is the parent span of the Check span ("" for none); wantSpans
		// false means nothing was recorded.
		wantSpans  bool
		wantParent string
	}{
		{name: "traceparent sampled", headers: map[string]string{"traceparent": "00-" + traceID + "-" + parentSpan + "-01"},
			wantSpans: true, wantParent: parentSpan},
		{name: "traceparent sampled, raw headers", raw: true, headers: map[string]string{"traceparent": "00-" + traceID + "-" + parentSpan + "-01"},
			wantSpans: true, wantParent: parentSpan},
		{name: "traceparent not sampled", ratio: 1, headers: map[string]string{"traceparent": "00-" + traceID + "-" + parentSpan + "-00"}},
		{name: "b3 single header", headers: map[string]string{"b3": traceID + "-" + parentSpan + "-1"},
			wantSpans: true, wantParent: parentSpan},
		{name: "b3 multiple headers", headers: map[string]string{"x-b3-traceid": traceID, "x-b3-spanid": parentSpan, "x-b3-sampled": "1"},
			wantSpans: true, wantParent: parentSpan},
		{name: "b3 not sampled", ratio: 1, headers: map[string]string{"b3": traceID + "-" + parentSpan + "-0"}},
		{name: "b3 deny alone", ratio: 1, headers: map[string]string{"b3": "0"}},
		{name: "b3 multiple headers not sampled", ratio: 1, headers: map[string]string{"x-b3-traceid": traceID, "x-b3-spanid": parentSpan, "x-b3-sampled": "0"}},
		{name: "b3 debug", headers: map[string]string{"x-b3-traceid": traceID, "x-b3-spanid": parentSpan, "x-b3-flags": "1"},
			wantSpans: true, wantParent: parentSpan},
		{name: "b3 deferred, ratio 0", headers: map[string]string{"b3": traceID + "-" + parentSpan}},
		{name: "gRPC metadata, over the client's header", md: map[string]string{"traceparent": "00-" + traceID + "-" + parentSpan + "-01"},
			headers: map[string]string{"traceparent": "00-" + traceID + "-" + clientSpan + "-01"}, wantSpans: true, wantParent: parentSpan},
		{name: "gRPC metadata not sampled", ratio: 1, md: map[string]string{"traceparent": "00-" + traceID + "-" + parentSpan + "-00"},
			headers: map[string]string{"traceparent": "00-" + traceID + "-" + clientSpan + "-01"}},
		{name: "gRPC metadata b3", md: map[string]string{"b3": traceID + "-" + parentSpan + "-1"}, wantSpans: true, wantParent: parentSpan},
		{name: "no parent, ratio 0"},
		{name: "no parent, ratio 1", ratio: 1, wantSpans: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec),
				sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample())))
			c := serve(t, telemetry.Options{Tracer: tp.Tracer("test"), Ratio: tc.ratio, Exporting: true})
			headers := map[string]string{"x-required": "alpha", "authorization": "Bearer secret-token-value"}
			for k, v := range tc.headers {
				headers[k] = v
			}
			req := checkRequest(configID, "/items?page=2", headers)
			if tc.raw {
				h := req.Attributes.Request.Http
				for k, v := range h.Headers {
					h.HeaderMap = &corev3.HeaderMap{Headers: append(h.GetHeaderMap().GetHeaders(), &corev3.HeaderValue{Key: k, RawValue: []byte(v)})}
				}
				h.Headers = nil
			}
			ctx := context.Background()
			for k, v := range tc.md {
				ctx = metadata.AppendToOutgoingContext(ctx, k, v)
			}
			if _, err := c.Check(ctx, req); err != nil {
				t.Fatal(err)
			}
			spans := rec.Ended()
			if !tc.wantSpans {
				if len(spans) != 0 {
					t.Fatalf("%d spans recorded, want none", len(spans))
				}
				return
			}
			var checkSpan sdktrace.ReadOnlySpan
			var steps []string
			for _, s := range spans {
				if s.Name() == "extauth.Check" {
					checkSpan = s
				}
			}
			if checkSpan == nil {
				t.Fatalf("no extauth.Check span among %d", len(spans))
			}
			for _, s := range spans {
				if s.Name() == "extauth.step" && s.Parent().SpanID() == checkSpan.SpanContext().SpanID() {
					steps = append(steps, attr(s, "step")+" "+attr(s, "kind")+" "+attr(s, "outcome"))
				}
				for _, kv := range s.Attributes() {
					if strings.Contains(kv.Value.Emit(), "secret-token-value") {
						t.Errorf("span %s attribute %s carries the token", s.Name(), kv.Key)
					}
				}
			}
			if tc.wantParent != "" {
				if got := checkSpan.Parent().SpanID().String(); got != tc.wantParent || !checkSpan.Parent().IsRemote() {
					t.Errorf("Check span parent = %s (remote %v), want %s", got, checkSpan.Parent().IsRemote(), tc.wantParent)
				}
				if got := checkSpan.SpanContext().TraceID().String(); got != traceID {
					t.Errorf("Check span trace = %s, want %s", got, traceID)
				}
			} else if checkSpan.Parent().IsValid() {
				t.Errorf("Check span has parent %s, want a root", checkSpan.Parent().SpanID())
			}
			want := []string{"step/required_header built-in allowed", "step/stamp built-in allowed"}
			if diff := cmp.Diff(want, steps); diff != "" {
				t.Errorf("step spans under the Check (-want +got):\n%s", diff)
			}
			if got := attr(checkSpan, "outcome") + " " + attr(checkSpan, "config_id"); got != "allowed "+configID {
				t.Errorf("Check span outcome and config_id = %q", got)
			}
		})
	}
}

func attr(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.Emit()
		}
	}
	return ""
}
