package server_test

import (
	"context"
	"testing"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/google/go-cmp/cmp"

	"gatehouse.dev/gatehouse/pluginapi"
	"gatehouse.dev/gatehouse/server"
	"gatehouse.dev/gatehouse/server/chain"
)

// TestRawCheckRequestOverGRPC: the wire bytes a step gets decode to the request the
// client sent, whether the server passes on the bytes it received or re-encodes the
// request because an interceptor replaced it.
func TestRawCheckRequestOverGRPC(t *testing.T) {
	sent := checkRequest("default.raw", map[string]string{"x-required": "alpha", "cookie": "a=b; c=d"})
	sent.Attributes.Request.Http.Body = "payload"
	tests := []struct {
		name        string
		interceptor grpc.UnaryServerInterceptor
		want        *authv3.CheckRequest
	}{
		{"bytes as received", nil, sent},
		{"an interceptor that passes the request on", func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			return h(ctx, req)
		}, sent},
		{"an interceptor that replaces the request", func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			r := proto.Clone(req.(*authv3.CheckRequest)).(*authv3.CheckRequest)
			r.Attributes.Request.Http.Headers["x-added"] = "by-interceptor"
			return h(ctx, r)
		}, withHeader(sent, "x-added", "by-interceptor")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := make(chan []byte, 1)
			capture := funcStep{name: "step/capture", fn: func(_ context.Context, req *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
				got <- req.RawCheckRequest
				return pluginapi.Allow(), nil
			}}
			reg := registryOf(t, time.Second, map[string][]chain.Step{"default.raw": {capture}})
			var opts []grpc.ServerOption
			if tt.interceptor != nil {
				opts = append(opts, grpc.UnaryInterceptor(tt.interceptor))
			}
			client := grpcClientWith(t, server.NewAuthorizer(reg, testLogger(t), nil), opts...)
			if _, err := client.Check(context.Background(), sent); err != nil {
				t.Fatal(err)
			}
			var decoded authv3.CheckRequest
			if err := proto.Unmarshal(<-got, &decoded); err != nil {
				t.Fatalf("RawCheckRequest does not decode: %v", err)
			}
			if diff := cmp.Diff(tt.want, &decoded, protocmp.Transform()); diff != "" {
				t.Errorf("RawCheckRequest (-want +got):\n%s", diff)
			}
		})
	}
}

func withHeader(r *authv3.CheckRequest, k, v string) *authv3.CheckRequest {
	c := proto.Clone(r).(*authv3.CheckRequest)
	c.Attributes.Request.Http.Headers[k] = v
	return c
}
