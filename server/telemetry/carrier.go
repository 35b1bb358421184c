package telemetry

import (
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"go.opentelemetry.io/contrib/propagators/b3"
	"go.opentelemetry.io/otel/propagation"
)

// propagator reads the trace context Envoy sends: W3C traceparent and tracestate, or
// B3 in its single-header or multi-header form.
var propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, b3.New())

// headerCarrier reads the request headers of a CheckRequest, from its headers map or,
// when Envoy sends raw headers (encode_raw_headers), from its header_map.
type headerCarrier struct{ r *authv3.CheckRequest }

// Get returns the value of the lower-case header key ("" when absent).
func (c headerCarrier) Get(key string) string {
	h := c.r.GetAttributes().GetRequest().GetHttp()
	if v, ok := h.GetHeaders()[key]; ok {
		return v
	}
	for _, kv := range h.GetHeaderMap().GetHeaders() {
		if kv.GetKey() == key {
			if kv.GetValue() != "" {
				return kv.GetValue()
			}
			return string(kv.GetRawValue())
		}
	}
	return ""
}

// Set does nothing: a CheckRequest is only read.
func (headerCarrier) Set(string, string) {}

// Keys is not needed to extract and returns nothing.
func (headerCarrier) Keys() []string { return nil }
