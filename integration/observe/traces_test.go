package observe_test

import (
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"gatehouse.dev/gatehouse/integration/testbin"
)

const (
	secretToken  = "Bearer s3cret-token-value"
	secretCookie = "session=s3cret-cookie-value"
)

// TestCheckSpanJoinsTheCallersTrace: a request sent through the dev gateway with a
// sampled W3C traceparent reaches a real OTLP receiver (gRPC, then HTTP) as an
// extauth.Check span of that trace, child of the span the traceparent names, with a
// child per step; no attribute carries the token or cookie the request had; a request
// without trace context is not traced (--trace-sample-ratio 0); the decision records
// arrive as OTLP logs; the control plane's runs are spans too.
func TestCheckSpanJoinsTheCallersTrace(t *testing.T) {
	for _, tc := range []struct {
		protocol string
		start    func(*testing.T) (*receiver, string)
	}{
		{protocol: "grpc", start: startGRPCReceiver},
		{protocol: "http/protobuf", start: startHTTPReceiver},
	} {
		t.Run(tc.protocol, func(t *testing.T) {
			r, addr := tc.start(t)
			d := startDev(t, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://" + addr, "OTEL_EXPORTER_OTLP_PROTOCOL=" + tc.protocol,
				"OTEL_BSP_SCHEDULE_DELAY=100", "OTEL_BLRP_EXPORT_INTERVAL=100", "OTEL_TRACES_SAMPLER=", "OTEL_SERVICE_NAME="},
				"--trace-sample-ratio", "0", "--decision-log", "otlp")
			traceID, parent := randomHex(16), randomHex(8)
			if got := d.get(t, map[string]string{"traceparent": "00-" + traceID + "-" + parent + "-01",
				"x-required": "alpha", "authorization": secretToken, "cookie": secretCookie}); got != http.StatusOK {
				t.Fatalf("traced request: status %d, want 200", got)
			}
			if got := d.get(t, map[string]string{"x-required": "nope", "authorization": secretToken}); got != http.StatusForbidden {
				t.Fatalf("untraced request: status %d, want 403", got)
			}

			var check *tracepb.Span
			var steps []*tracepb.Span
			testbin.Eventually(t, 15*time.Second, func() error {
				spans, _ := r.received()
				check, steps = nil, nil
				for _, s := range spans {
					if s.service == "gatehouse-extauth" && s.span.GetName() == "extauth.Check" {
						if hex.EncodeToString(s.span.GetTraceId()) != traceID {
							return fmt.Errorf("an extauth.Check span of trace %x: only the traceparent's trace is sampled", s.span.GetTraceId())
						}
						check = s.span
					}
				}
				if check == nil {
					return fmt.Errorf("no extauth.Check span among %d received", len(spans))
				}
				for _, s := range spans {
					if s.span.GetName() == "extauth.step" && string(s.span.GetParentSpanId()) == string(check.GetSpanId()) {
						steps = append(steps, s.span)
					}
				}
				if len(steps) == 0 {
					return fmt.Errorf("no extauth.step span under the Check span yet")
				}
				return nil
			})
			if got := hex.EncodeToString(check.GetParentSpanId()); got != parent {
				t.Errorf("Check span's parent = %s, want the traceparent's span %s", got, parent)
			}
			if got := attrs(check.GetAttributes()); got["config_id"] != "gatehouse-system.plugin-auth" || got["outcome"] != "allowed" {
				t.Errorf("Check span attributes = %v, want config_id gatehouse-system.plugin-auth and outcome allowed", got)
			}
			step := attrs(steps[0].GetAttributes())
			if step["step"] != "step/required_header" || step["kind"] != "plugin" || step["outcome"] != "allowed" {
				t.Errorf("step span attributes = %v, want step/required_header, plugin, allowed", step)
			}
			if steps[0].GetEndTimeUnixNano() <= steps[0].GetStartTimeUnixNano() {
				t.Errorf("step span has no duration")
			}

			spans, logs := r.received()
			services := map[string]bool{}
			for _, s := range spans {
				services[s.service] = true
				for k, v := range attrs(s.span.GetAttributes()) {
					if strings.Contains(v, "s3cret") {
						t.Errorf("span %s attribute %s carries a secret: %q", s.span.GetName(), k, v)
					}
				}
			}
			if !services["gatehouse-controlplane"] {
				t.Errorf("no span from the control plane; services seen: %v", services)
			}
			testbin.Eventually(t, 15*time.Second, func() error {
				_, logs = r.received()
				decisions := map[string]string{}
				for _, l := range logs {
					a := attrs(l.GetAttributes())
					decisions[a["decision"]] = a["trace_id"]
					for k, v := range a {
						if strings.Contains(v, "s3cret") || strings.Contains(v, "hidden-query") {
							return fmt.Errorf("decision record attribute %s carries %q", k, v)
						}
					}
				}
				if _, denied := decisions["deny"]; decisions["allow"] != traceID || !denied {
					return fmt.Errorf("decision records by decision (trace ids): %v; want allow of trace %s and a deny", decisions, traceID)
				}
				return nil
			})
		})
	}
}

// attrs are the string forms of OTLP attributes.
func attrs(kvs []*commonpb.KeyValue) map[string]string {
	out := map[string]string{}
	for _, kv := range kvs {
		v := kv.GetValue()
		switch {
		case v.GetStringValue() != "":
			out[kv.GetKey()] = v.GetStringValue()
		case v.GetIntValue() != 0:
			out[kv.GetKey()] = fmt.Sprint(v.GetIntValue())
		default:
			out[kv.GetKey()] = v.String()
		}
	}
	return out
}
