package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"github.com/rs/zerolog"
	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"gatehouse.dev/gatehouse/internal/mtls"
)

// configID is the context extension the route of the example sends; chainID that of
// the three-step chain.
const (
	configID = "gatehouse-system.plugin-auth"
	chainID  = "gatehouse-system.plugin-chain"
)

// longChainPath is the load through the long chain ("chain21").
var longChainPath = fmt.Sprintf("chain%d", longChainSteps)

// paths are the workloads of the plugin phase: the two decisions of the one-step
// chain, by the x-required value that leads to each, and the allow of the three-step
// and the long chain (every step runs).
var paths = []struct{ name, value, configID string }{
	{name: "allow", value: "alpha", configID: configID},
	{name: "deny", value: "nope", configID: configID},
	{name: "chain3", value: "alpha", configID: chainID},
	{name: longChainPath, value: "alpha", configID: "gatehouse-system." + longChainName},
}

// pathNames are the names of paths, the plugin phase's workloads.
func pathNames() []string {
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = p.name
	}
	return names
}

// checkRequest is what Envoy sends for a browser's API call on the plugin route of
// id: ten headers, the route's config_id and both peers.
func checkRequest(id, required string) *authv3.CheckRequest {
	return browserRequest(id, "/api/v1/items?page=2", map[string]string{"accept": "application/json", "x-required": required})
}

// browserRequest is what Envoy sends for a browser's GET of path on the route of id:
// the eight headers every such request has plus extra, the route's config_id and
// both peers.
func browserRequest(id, path string, extra map[string]string) *authv3.CheckRequest {
	peer := func(ip string, port uint32) *authv3.AttributeContext_Peer {
		return &authv3.AttributeContext_Peer{Address: &corev3.Address{Address: &corev3.Address_SocketAddress{
			SocketAddress: &corev3.SocketAddress{Address: ip, PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: port}},
		}}}
	}
	headers := map[string]string{
		":authority":      "app.example.com",
		":method":         "GET",
		":path":           path,
		":scheme":         "https",
		"accept-encoding": "gzip, deflate, br",
		"user-agent":      "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36",
		"x-forwarded-for": "203.0.113.7",
		"x-request-id":    "5f1c3a52-7d1e-4b8e-9a43-0c2f2d1b6e11",
	}
	for k, v := range extra {
		headers[k] = v
	}
	return &authv3.CheckRequest{Attributes: &authv3.AttributeContext{
		Source:      peer("203.0.113.7", 53124),
		Destination: peer("10.0.0.12", 8080),
		Request: &authv3.AttributeContext_Request{Http: &authv3.AttributeContext_HttpRequest{
			Id:       "5f1c3a52-7d1e-4b8e-9a43-0c2f2d1b6e11",
			Method:   "GET",
			Path:     path,
			Host:     "app.example.com",
			Scheme:   "https",
			Protocol: "HTTP/1.1",
			Headers:  headers,
		}},
		ContextExtensions: map[string]string{"config_id": id},
	}}
}

// writeRequest writes the CheckRequest of the plugin route of id for value.
func writeRequest(dir, name, id, value string) (string, error) {
	return writeCheckRequest(dir, name, checkRequest(id, value))
}

// writeCheckRequest writes req in protobuf binary form, which ghz sends as is (-B)
// instead of converting JSON on every call.
func writeCheckRequest(dir, name string, req *authv3.CheckRequest) (string, error) {
	b, err := proto.Marshal(req)
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, "check-"+name+".bin")
	return p, os.WriteFile(p, b, 0o644)
}

// verify sends s one Check per path and makes sure the answer is the one the load
// test means to measure: the bare server allows all, gatehouse allows "alpha" with
// the plugin's header (through one step or three) and denies "nope" with 403.
func verify(ctx context.Context, s *server) error {
	creds := insecure.NewCredentials()
	if s.clientTLS != "" {
		f, err := mtls.Load(s.clientTLS, zerolog.Nop())
		if err != nil {
			return err
		}
		creds = mtls.ClientCredentials(f, mtls.RoleExtauth)
	}
	conn, err := grpc.NewClient(s.addr, grpc.WithTransportCredentials(creds))
	if err != nil {
		return err
	}
	defer conn.Close()
	client := authv3.NewAuthorizationClient(conn)
	for _, p := range paths {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		resp, err := client.Check(cctx, checkRequest(p.configID, p.value))
		cancel()
		if err != nil {
			return fmt.Errorf("%s: Check (%s): %w", s.name, p.name, err)
		}
		if err := expected(s.name, p.name, resp); err != nil {
			return fmt.Errorf("%s: Check (%s): %w", s.name, p.name, err)
		}
	}
	return nil
}

func expected(server, path string, resp *authv3.CheckResponse) error {
	got := code.Code(resp.GetStatus().GetCode())
	switch {
	case server == "bare" || path != "deny":
		if got != code.Code_OK {
			return fmt.Errorf("status %s, want OK", got)
		}
		if server == "bare" {
			return nil
		}
		for _, h := range resp.GetOkResponse().GetHeaders() {
			if h.GetHeader().GetKey() == "matched-allowed-headers" && h.GetHeader().GetValue() == "true" {
				return nil
			}
		}
		return fmt.Errorf("allowed without the plugin's header matched-allowed-headers: true (%v)", resp.GetOkResponse())
	default:
		if got != code.Code_PERMISSION_DENIED || resp.GetDeniedResponse().GetStatus().GetCode() != 403 {
			return fmt.Errorf("status %s with HTTP %d, want PERMISSION_DENIED with 403", got, resp.GetDeniedResponse().GetStatus().GetCode())
		}
		return nil
	}
}
