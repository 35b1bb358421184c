package main

import (
	"context"
	"net"
	"testing"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
)

// TestBareServer checks over real gRPC that every Check is allowed, whatever it asks,
// and that reflection lists the service (ghz finds the method through it).
func TestBareServer(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := newServer()
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ctx := context.Background()

	for _, tc := range []struct {
		name string
		req  *authv3.CheckRequest
	}{
		{name: "empty", req: &authv3.CheckRequest{}},
		{name: "with headers", req: &authv3.CheckRequest{Attributes: &authv3.AttributeContext{
			Request: &authv3.AttributeContext_Request{Http: &authv3.AttributeContext_HttpRequest{
				Headers: map[string]string{"x-required": "nope"},
			}},
			ContextExtensions: map[string]string{"config_id": "gatehouse-system.plugin-auth"},
		}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := authv3.NewAuthorizationClient(conn).Check(ctx, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if got := code.Code(resp.GetStatus().GetCode()); got != code.Code_OK {
				t.Errorf("status = %s, want OK", got)
			}
		})
	}

	t.Run("reflection", func(t *testing.T) {
		stream, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
		if err != nil {
			t.Fatal(err)
		}
		req := &reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}
		if err := stream.Send(req); err != nil {
			t.Fatal(err)
		}
		resp, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		for _, svc := range resp.GetListServicesResponse().GetService() {
			if svc.GetName() == authv3.Authorization_ServiceDesc.ServiceName {
				return
			}
		}
		t.Errorf("reflection lists %v, want %s among them", resp.GetListServicesResponse().GetService(), authv3.Authorization_ServiceDesc.ServiceName)
	})
}
