package telemetry_test

import (
	"context"
	"net"
	"testing"
	"time"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/pluginapi"
	"gatehouse.dev/gatehouse/server"
	"gatehouse.dev/gatehouse/server/chain"
	"gatehouse.dev/gatehouse/server/telemetry"
)

const configID = "team.web"

// requireHeader allows requests whose x-required header is alpha.
type requireHeader struct{}

func (requireHeader) Name() string { return "step/required_header" }

func (requireHeader) Authorize(_ context.Context, req *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
	if v, _ := req.Header("x-required"); v != "alpha" {
		return pluginapi.Forbidden(), nil
	}
	return pluginapi.Allow().WithRequestHeader("x-checked", "yes"), nil
}

// stamp allows every request.
type stamp struct{}

func (stamp) Name() string { return "step/stamp" }

func (stamp) Authorize(context.Context, *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
	return pluginapi.Allow(), nil
}

// serve runs a real ext_authz gRPC server on loopback with o wired as extauth wires
// it, serving configID with the steps requireHeader then stamp, and returns a client.
func serve(t *testing.T, o telemetry.Options) authv3.AuthorizationClient {
	t.Helper()
	if o.Registerer == nil {
		o.Registerer = prometheus.NewRegistry()
	}
	obs := telemetry.New(o)
	build := obs.Build(func(_ context.Context, cfg *extauthv1.ExtAuthConfig) (*chain.Chain, error) {
		return &chain.Chain{ID: cfg.GetConfigId(), Steps: []chain.Step{requireHeader{}, stamp{}}, Timeout: time.Second}, nil
	})
	reg := server.NewRegistry(build, zerolog.Nop())
	reg.Apply([]*extauthv1.ExtAuthConfig{{ConfigId: configID}}, nil)
	authz := server.NewAuthorizer(reg, zerolog.Nop(), nil)
	authz.Observe(obs)
	srv := server.NewGRPCServer(authz, obs.Interceptor())
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return authv3.NewAuthorizationClient(conn)
}

// checkRequest is a CheckRequest for config id with the given request headers.
func checkRequest(id, path string, headers map[string]string) *authv3.CheckRequest {
	h := map[string]string{":path": path, ":method": "GET", ":authority": "app.example.com"}
	for k, v := range headers {
		h[k] = v
	}
	ext := map[string]string{}
	if id != "" {
		ext[server.ConfigIDKey] = id
	}
	return &authv3.CheckRequest{Attributes: &authv3.AttributeContext{
		Request: &authv3.AttributeContext_Request{Http: &authv3.AttributeContext_HttpRequest{
			Id: "req-1", Method: "GET", Path: path, Host: "app.example.com", Headers: h,
		}},
		ContextExtensions: ext,
	}}
}

func check(t *testing.T, c authv3.AuthorizationClient, req *authv3.CheckRequest) *authv3.CheckResponse {
	t.Helper()
	resp, err := c.Check(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}
