package server_test

import (
	"context"
	"io"
	"slices"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/protobuf/proto"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/pluginapi"
	"gatehouse.dev/gatehouse/server"
	"gatehouse.dev/gatehouse/server/chain"
)

const benchConfigID = "gatehouse-system.plugin-auth"

// requiredHeaderStep has the logic of plugins/required_header. The real .so is not
// loaded here: a test binary is built with other flags than the plugin (and -race or
// -cover make plugin.Open refuse it), so `make bench` measures the real plugin in the
// gatehouse process instead and this benchmark measures everything around it.
type requiredHeaderStep struct{}

func (requiredHeaderStep) Name() string { return "step/required_header" }

func (requiredHeaderStep) Authorize(_ context.Context, req *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
	v, ok := req.Header("x-required")
	if !ok || !slices.Contains([]string{"alpha", "beta"}, v) {
		return pluginapi.Forbidden(), nil
	}
	return pluginapi.Allow().WithRequestHeader("matched-allowed-headers", "true"), nil
}

// benchCheckRequest is what Envoy sends for a browser request: ten headers, the
// route's config_id, and both peers.
func benchCheckRequest(required string) *authv3.CheckRequest {
	addr := func(ip string, port uint32) *authv3.AttributeContext_Peer {
		return &authv3.AttributeContext_Peer{Address: &corev3.Address{Address: &corev3.Address_SocketAddress{
			SocketAddress: &corev3.SocketAddress{Address: ip, PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: port}},
		}}}
	}
	return &authv3.CheckRequest{Attributes: &authv3.AttributeContext{
		Source:      addr("203.0.113.7", 53124),
		Destination: addr("10.0.0.12", 8080),
		Request: &authv3.AttributeContext_Request{Http: &authv3.AttributeContext_HttpRequest{
			Id:       "5f1c3a52-7d1e-4b8e-9a43-0c2f2d1b6e11",
			Method:   "GET",
			Path:     "/api/v1/items?page=2",
			Host:     "app.example.com",
			Scheme:   "https",
			Protocol: "HTTP/1.1",
			Headers: map[string]string{
				":authority":      "app.example.com",
				":method":         "GET",
				":path":           "/api/v1/items?page=2",
				":scheme":         "https",
				"accept":          "application/json",
				"accept-encoding": "gzip, deflate, br",
				"user-agent":      "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36",
				"x-forwarded-for": "203.0.113.7",
				"x-request-id":    "5f1c3a52-7d1e-4b8e-9a43-0c2f2d1b6e11",
				"x-required":      required,
			},
		}},
		ContextExtensions: map[string]string{server.ConfigIDKey: benchConfigID},
	}}
}

// envoyDeadline is a context whose deadline is always Envoy's default ext_authz
// timeout away, as each Check's context is in production, without the allocations of
// a context per iteration (gRPC makes that one, not the server).
type envoyDeadline struct{ context.Context }

func (envoyDeadline) Deadline() (time.Time, bool) {
	return time.Now().Add(200 * time.Millisecond), true
}

// BenchmarkCheck runs Authorizer.Check with the registry, metrics and logger the
// server uses, minus gRPC. The CheckRequest is decoded once and reused; "+decode"
// also decodes it from the wire each time, as gRPC does before calling Check, and
// "marshal" is the proto.Marshal that Check does to fill RawCheckRequest.
func BenchmarkCheck(b *testing.B) {
	build := func(context.Context, *extauthv1.ExtAuthConfig) (*chain.Chain, error) {
		return &chain.Chain{ID: benchConfigID, Steps: []chain.Step{requiredHeaderStep{}}, Timeout: 200 * time.Millisecond}, nil
	}
	log := zerolog.New(io.Discard).Level(zerolog.InfoLevel)
	reg := server.NewRegistry(build, log)
	reg.Apply([]*extauthv1.ExtAuthConfig{{ConfigId: benchConfigID}}, nil)
	a := server.NewAuthorizer(reg, log, server.NewMetrics(prometheus.NewRegistry()))
	ctx := context.Background()

	for _, tc := range []struct {
		name, value string
		want        code.Code
	}{
		{name: "allow", value: "alpha", want: code.Code_OK},
		{name: "deny", value: "nope", want: code.Code_PERMISSION_DENIED},
	} {
		req := benchCheckRequest(tc.value)
		wire, err := proto.Marshal(req)
		if err != nil {
			b.Fatal(err)
		}
		check := func(b *testing.B, req *authv3.CheckRequest) {
			resp, err := a.Check(ctx, req)
			if err != nil || code.Code(resp.GetStatus().GetCode()) != tc.want {
				b.Fatalf("Check = %v, %v; want %v", resp.GetStatus(), err, tc.want)
			}
		}
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				check(b, req)
			}
		})
		// wire is the path of a Check served over gRPC: the codec decodes the request
		// and keeps its bytes, and the context carries Envoy's deadline (its ext_authz
		// timeout, sent as grpc-timeout). Allocations beyond decoding are this minus
		// "decode".
		b.Run(tc.name+"/wire", func(b *testing.B) {
			ctx := envoyDeadline{ctx}
			b.ReportAllocs()
			for b.Loop() {
				w, err := server.DecodeWire(wire)
				if err != nil {
					b.Fatal(err)
				}
				resp, err := a.CheckWire(ctx, w)
				if err != nil || code.Code(resp.GetStatus().GetCode()) != tc.want {
					b.Fatalf("Check = %v, %v; want %v", resp.GetStatus(), err, tc.want)
				}
			}
		})
		b.Run(tc.name+"+decode", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var r authv3.CheckRequest
				if err := proto.Unmarshal(wire, &r); err != nil {
					b.Fatal(err)
				}
				check(b, &r)
			}
		})
	}
	b.Run("decode", func(b *testing.B) {
		wire, err := proto.Marshal(benchCheckRequest("alpha"))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := server.DecodeWire(wire); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("marshal", func(b *testing.B) {
		req := benchCheckRequest("alpha")
		b.ReportAllocs()
		for b.Loop() {
			if _, err := proto.Marshal(req); err != nil {
				b.Fatal(err)
			}
		}
	})
}
