package telemetry

import (
	"context"
	"strconv"
	"strings"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"go.opentelemetry.io/contrib/propagators/b3"
	"go.opentelemetry.io/otel/propagation"
	"google.golang.org/grpc/metadata"
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

// metadataCarrier reads the gRPC metadata of a Check call.
type metadataCarrier struct{ ctx context.Context }

// Get returns the first value of key ("" when absent).
func (c metadataCarrier) Get(key string) string {
	if v := metadata.ValueFromIncomingContext(c.ctx, key); len(v) > 0 {
		return v[0]
	}
	return ""
}

// Set does nothing: the metadata is only read.
func (metadataCarrier) Set(string, string) {}

// Keys is not needed to extract and returns nothing.
func (metadataCarrier) Keys() []string { return nil }

// traceCarrier is where a Check's trace context is read: the call's gRPC metadata when
// it holds one (Envoy, tracing the request, sends its ext_authz span's context there),
// else the request headers the CheckRequest carries.
func traceCarrier(ctx context.Context, r *authv3.CheckRequest) propagation.TextMapCarrier {
	md := metadataCarrier{ctx}
	for _, k := range []string{"traceparent", "b3", "x-b3-traceid"} {
		if md.Get(k) != "" {
			return md
		}
	}
	return headerCarrier{r}
}

// parentSampled reads only the sampled flag of the trace context in c; known is false
// when it cannot tell (no trace context, or one that defers the decision), and the
// propagator then decides.
func parentSampled(c interface{ Get(string) string }) (sampled, known bool) {
	if tp := c.Get("traceparent"); tp != "" {
		// version-traceid-parentid-flags: 00-<32 hex>-<16 hex>-<2 hex>
		if len(tp) < 55 || tp[52] != '-' {
			return false, false
		}
		f, err := strconv.ParseUint(tp[53:55], 16, 8)
		return f&1 == 1, err == nil
	}
	if b := c.Get("b3"); b != "" {
		// {traceid}-{spanid}[-{sampling}[-{parent}]], or the sampling state alone.
		parts := strings.SplitN(b, "-", 4)
		state := parts[0]
		if len(parts) > 1 {
			if len(parts) < 3 {
				return false, false
			}
			state = parts[2]
		}
		return b3Sampled(state)
	}
	if c.Get("x-b3-flags") == "1" {
		return true, true
	}
	if s := c.Get("x-b3-sampled"); s != "" {
		return b3Sampled(s)
	}
	return false, false
}

func b3Sampled(state string) (sampled, known bool) {
	switch state {
	case "1", "d", "true":
		return true, true
	case "0", "false":
		return false, true
	}
	return false, false
}
