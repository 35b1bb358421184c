package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/rs/zerolog"
	"google.golang.org/genproto/googleapis/rpc/code"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	"gatehouse.dev/gatehouse/internal/syncbuf"
	"gatehouse.dev/gatehouse/pluginapi"
	"gatehouse.dev/gatehouse/server"
	"gatehouse.dev/gatehouse/server/chain"
)

// funcStep is a chain.Step from a function.
type funcStep struct {
	name string
	fn   func(ctx context.Context, req *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error)
}

func (s funcStep) Name() string { return s.name }

func (s funcStep) Authorize(ctx context.Context, req *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
	return s.fn(ctx, req)
}

func respond(name string, resp *pluginapi.AuthorizationResponse) funcStep {
	return funcStep{name: name, fn: func(context.Context, *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
		return resp, nil
	}}
}

// registryOf serves chains made of the given steps, one per config_id.
func registryOf(t *testing.T, timeout time.Duration, steps map[string][]chain.Step) *server.Registry {
	t.Helper()
	reg := server.NewRegistry(func(_ context.Context, cfg *extauthv1.ExtAuthConfig) (*chain.Chain, error) {
		return &chain.Chain{ID: cfg.GetConfigId(), Steps: steps[cfg.GetConfigId()], Timeout: timeout}, nil
	}, testLogger(t))
	var list []*extauthv1.ExtAuthConfig
	for id := range steps {
		list = append(list, &extauthv1.ExtAuthConfig{ConfigId: id})
	}
	for _, st := range reg.Apply(list, nil) {
		if st.State != server.StateAccepted {
			t.Fatalf("status %+v", st)
		}
	}
	t.Cleanup(reg.Close)
	// Abandoned calls log through the test's logger when they return: wait for them,
	// so none logs after the test ended.
	t.Cleanup(func() {
		for deadline := time.Now().Add(10 * time.Second); chain.Abandoned() != 0 && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	})
	return reg
}

func checkRequest(configID string, headers map[string]string) *authv3.CheckRequest {
	return &authv3.CheckRequest{Attributes: &authv3.AttributeContext{
		Request: &authv3.AttributeContext_Request{Http: &authv3.AttributeContext_HttpRequest{
			Id: "req-1", Method: "GET", Path: "/", Host: "example.com", Scheme: "http", Headers: headers,
		}},
		ContextExtensions: map[string]string{server.ConfigIDKey: configID},
	}}
}

func socketPeer(addr string, port uint32, principal string) *authv3.AttributeContext_Peer {
	return &authv3.AttributeContext_Peer{Principal: principal, Address: &corev3.Address{Address: &corev3.Address_SocketAddress{
		SocketAddress: &corev3.SocketAddress{Address: addr, PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: port}},
	}}}
}

func TestCheckRequestConversion(t *testing.T) {
	tests := []struct {
		name string
		req  *authv3.CheckRequest
		want *pluginapi.AuthorizationRequest
	}{
		{
			name: "headers map and every attribute",
			req: &authv3.CheckRequest{Attributes: &authv3.AttributeContext{
				Source:      socketPeer("10.1.2.3", 51234, "spiffe://client"),
				Destination: socketPeer("10.9.9.9", 8080, ""),
				Request: &authv3.AttributeContext_Request{Http: &authv3.AttributeContext_HttpRequest{
					Id: "abc-123", Method: "POST", Path: "/api/items?x=1", Host: "shop.example", Scheme: "https", Protocol: "HTTP/2",
					Headers: map[string]string{":path": "/api/items?x=1", "x-required": "alpha", "cookie": "a=1; b=2"},
					Body:    "ignored when raw_body is set",
					RawBody: []byte{0, 1, 2},
				}},
				ContextExtensions: map[string]string{server.ConfigIDKey: "ns.rec", "team": "a"},
			}},
			want: &pluginapi.AuthorizationRequest{
				Method: "POST", Path: "/api/items?x=1", Host: "shop.example", Scheme: "https", Protocol: "HTTP/2",
				Headers:           map[string]string{":path": "/api/items?x=1", "x-required": "alpha", "cookie": "a=1; b=2"},
				Body:              []byte{0, 1, 2},
				ContextExtensions: map[string]string{server.ConfigIDKey: "ns.rec", "team": "a"},
				Source:            pluginapi.Peer{Address: "10.1.2.3:51234", Principal: "spiffe://client"},
				Destination:       pluginapi.Peer{Address: "10.9.9.9:8080"},
				RequestID:         "abc-123",
			},
		},
		{
			name: "header_map form joins repeated headers; string body",
			req: &authv3.CheckRequest{Attributes: &authv3.AttributeContext{
				Request: &authv3.AttributeContext_Request{Http: &authv3.AttributeContext_HttpRequest{
					Method: "GET", Path: "/",
					HeaderMap: &corev3.HeaderMap{Headers: []*corev3.HeaderValue{
						{Key: "x-forwarded-for", RawValue: []byte("1.1.1.1")},
						{Key: "accept", RawValue: []byte("text/html")},
						{Key: "x-forwarded-for", RawValue: []byte("2.2.2.2")},
						{Key: "x-old-style", Value: "v"},
					}},
					Body: "hello",
				}},
				ContextExtensions: map[string]string{server.ConfigIDKey: "ns.rec"},
			}},
			want: &pluginapi.AuthorizationRequest{
				Method: "GET", Path: "/",
				Headers:           map[string]string{"x-forwarded-for": "1.1.1.1,2.2.2.2", "accept": "text/html", "x-old-style": "v"},
				Body:              []byte("hello"),
				ContextExtensions: map[string]string{server.ConfigIDKey: "ns.rec"},
			},
		},
		{
			// Regression: an IPv6 peer came out as "::1:443", which no parser splits.
			name: "IPv6 peers",
			req: &authv3.CheckRequest{Attributes: &authv3.AttributeContext{
				Source:            socketPeer("::1", 443, ""),
				Destination:       socketPeer("2001:db8::1", 8443, ""),
				Request:           &authv3.AttributeContext_Request{Http: &authv3.AttributeContext_HttpRequest{}},
				ContextExtensions: map[string]string{server.ConfigIDKey: "ns.rec"},
			}},
			want: &pluginapi.AuthorizationRequest{
				Headers:           map[string]string{},
				ContextExtensions: map[string]string{server.ConfigIDKey: "ns.rec"},
				Source:            pluginapi.Peer{Address: "[::1]:443"},
				Destination:       pluginapi.Peer{Address: "[2001:db8::1]:8443"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *pluginapi.AuthorizationRequest
			rec := funcStep{name: "step/rec", fn: func(_ context.Context, req *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
				got = req
				return pluginapi.Allow(), nil
			}}
			a := server.NewAuthorizer(registryOf(t, time.Minute, map[string][]chain.Step{"ns.rec": {rec}}), testLogger(t), nil)
			sent := proto.Clone(tt.req).(*authv3.CheckRequest)
			if _, err := a.Check(context.Background(), tt.req); err != nil {
				t.Fatalf("Check: %v", err)
			}
			if got == nil {
				t.Fatal("the step was not called")
			}
			var decoded authv3.CheckRequest
			if err := proto.Unmarshal(got.RawCheckRequest, &decoded); err != nil {
				t.Fatalf("RawCheckRequest does not decode: %v", err)
			}
			if diff := cmp.Diff(sent, &decoded, protocmp.Transform()); diff != "" {
				t.Errorf("RawCheckRequest decodes to another request (-sent +decoded):\n%s", diff)
			}
			if got.State == nil {
				t.Errorf("State is nil; steps must be able to write to it")
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(pluginapi.AuthorizationRequest{}, "RawCheckRequest", "State")); diff != "" {
				t.Errorf("AuthorizationRequest (-want +got):\n%s", diff)
			}
		})
	}
}

// sortHeaders orders header options so responses built from maps compare equal.
var sortHeaders = protocmp.SortRepeated(func(a, b *corev3.HeaderValueOption) bool {
	ka := a.GetHeader().GetKey() + "\x00" + a.GetHeader().GetValue()
	kb := b.GetHeader().GetKey() + "\x00" + b.GetHeader().GetValue()
	return ka < kb
})

func hvo(k, v string, action corev3.HeaderValueOption_HeaderAppendAction) *corev3.HeaderValueOption {
	return &corev3.HeaderValueOption{Header: &corev3.HeaderValue{Key: k, Value: v}, AppendAction: action}
}

const (
	overwrite = corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD
	appendTo  = corev3.HeaderValueOption_APPEND_IF_EXISTS_OR_ADD
)

func denied(rpc code.Code, status int, body string, headers ...*corev3.HeaderValueOption) *authv3.CheckResponse {
	return &authv3.CheckResponse{
		Status: &rpcstatus.Status{Code: int32(rpc)},
		HttpResponse: &authv3.CheckResponse_DeniedResponse{DeniedResponse: &authv3.DeniedHttpResponse{
			Status: &typev3.HttpStatus{Code: typev3.StatusCode(status)}, Headers: headers, Body: body,
		}},
	}
}

func TestCheckResponseConversion(t *testing.T) {
	tests := []struct {
		name     string
		steps    []chain.Step
		configID string
		want     *authv3.CheckResponse
	}{
		{
			name: "allow with every kind of header",
			steps: []chain.Step{respond("step/a", pluginapi.Allow().
				WithRequestHeader("x-user", "alice").
				WithAppendedRequestHeader("x-trace", "gh").
				WithoutRequestHeader("authorization").
				WithResponseHeader("cache-control", "no-store").
				WithAddedResponseHeader("set-cookie", "a=1").
				WithAddedResponseHeader("set-cookie", "b=2"))},
			want: &authv3.CheckResponse{
				Status: &rpcstatus.Status{Code: int32(code.Code_OK)},
				HttpResponse: &authv3.CheckResponse_OkResponse{OkResponse: &authv3.OkHttpResponse{
					Headers:         []*corev3.HeaderValueOption{hvo("x-user", "alice", overwrite), hvo("x-trace", "gh", appendTo)},
					HeadersToRemove: []string{"authorization"},
					ResponseHeadersToAdd: []*corev3.HeaderValueOption{
						hvo("cache-control", "no-store", overwrite), hvo("set-cookie", "a=1", appendTo), hvo("set-cookie", "b=2", appendTo),
					},
				}},
			},
		},
		{
			name:  "plain allow",
			steps: []chain.Step{respond("step/a", pluginapi.Allow())},
			want: &authv3.CheckResponse{
				Status:       &rpcstatus.Status{Code: int32(code.Code_OK)},
				HttpResponse: &authv3.CheckResponse_OkResponse{OkResponse: &authv3.OkHttpResponse{}},
			},
		},
		{
			name:  "forbidden",
			steps: []chain.Step{respond("step/a", pluginapi.Forbidden())},
			want:  denied(code.Code_PERMISSION_DENIED, http.StatusForbidden, ""),
		},
		{
			name:  "zero status is 403",
			steps: []chain.Step{respond("step/a", &pluginapi.AuthorizationResponse{Body: "no"})},
			want:  denied(code.Code_PERMISSION_DENIED, http.StatusForbidden, "no"),
		},
		{
			name: "unauthenticated with headers and body",
			steps: []chain.Step{respond("step/a", pluginapi.Unauthenticated().
				WithResponseHeader("www-authenticate", "Bearer").
				WithResponseHeader("content-type", "text/plain"))},
			want: denied(code.Code_UNAUTHENTICATED, http.StatusUnauthorized, "",
				hvo("www-authenticate", "Bearer", overwrite), hvo("content-type", "text/plain", overwrite)),
		},
		{
			name: "redirect with cookies",
			steps: []chain.Step{respond("step/login", pluginapi.Deny(http.StatusFound, "").
				WithResponseHeader("location", "https://idp.example/auth").
				WithAddedResponseHeader("set-cookie", "state=1").
				WithAddedResponseHeader("set-cookie", "nonce=2"))},
			want: denied(code.Code_PERMISSION_DENIED, http.StatusFound, "",
				hvo("location", "https://idp.example/auth", overwrite), hvo("set-cookie", "state=1", appendTo), hvo("set-cookie", "nonce=2", appendTo)),
		},
		{
			name:  "5xx is unavailable",
			steps: []chain.Step{respond("step/a", pluginapi.Deny(http.StatusServiceUnavailable, "down"))},
			want:  denied(code.Code_UNAVAILABLE, http.StatusServiceUnavailable, "down"),
		},
		{
			name: "step error is a 500",
			steps: []chain.Step{funcStep{name: "step/err", fn: func(context.Context, *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
				return nil, errors.New("backend down")
			}}},
			want: denied(code.Code_UNAVAILABLE, http.StatusInternalServerError, ""),
		},
		{
			name:     "unknown config_id",
			configID: "ns.nope",
			want:     denied(code.Code_PERMISSION_DENIED, http.StatusForbidden, ""),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := server.NewAuthorizer(registryOf(t, time.Minute, map[string][]chain.Step{"ns.x": tt.steps}), testLogger(t), nil)
			id := tt.configID
			if id == "" {
				id = "ns.x"
			}
			got, err := a.Check(context.Background(), checkRequest(id, map[string]string{"authorization": "Bearer t"}))
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, protocmp.Transform(), sortHeaders); diff != "" {
				t.Errorf("CheckResponse (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckHonoursTheIncomingDeadline(t *testing.T) {
	deadlines := make(chan time.Time, 1)
	rec := funcStep{name: "step/rec", fn: func(ctx context.Context, _ *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
		d, _ := ctx.Deadline()
		deadlines <- d
		return pluginapi.Allow(), nil
	}}
	a := server.NewAuthorizer(registryOf(t, time.Hour, map[string][]chain.Step{"ns.x": {rec}}), testLogger(t), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	want, _ := ctx.Deadline()
	if _, err := a.Check(ctx, checkRequest("ns.x", nil)); err != nil {
		t.Fatal(err)
	}
	if got := <-deadlines; !got.Equal(want) {
		t.Errorf("step deadline = %v, want the caller's %v (chain timeout 1h)", got, want)
	}
}

// grpcClient starts a in-process extauth server on a 127.0.0.1 port and returns
// clients for it.
func grpcClient(t *testing.T, a *server.Authorizer) (authv3.AuthorizationClient, healthpb.HealthClient) {
	t.Helper()
	return grpcClients(t, a)
}

// grpcClientWith is grpcClient for a server built with opts.
func grpcClientWith(t *testing.T, a *server.Authorizer, opts ...grpc.ServerOption) authv3.AuthorizationClient {
	t.Helper()
	c, _ := grpcClients(t, a, opts...)
	return c
}

func grpcClients(t *testing.T, a *server.Authorizer, opts ...grpc.ServerOption) (authv3.AuthorizationClient, healthpb.HealthClient) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := server.NewGRPCServer(a, opts...)
	done := make(chan error, 1)
	go func() { done <- s.Serve(lis) }()
	t.Cleanup(func() {
		s.Stop()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return authv3.NewAuthorizationClient(conn), healthpb.NewHealthClient(conn)
}

func requiredHeader(name string, allowed ...string) funcStep {
	return funcStep{name: "step/required_header", fn: func(_ context.Context, req *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
		v, ok := req.Header(name)
		for _, a := range allowed {
			if ok && v == a {
				return pluginapi.Allow().WithRequestHeader("matched-allowed-headers", "true"), nil
			}
		}
		return pluginapi.Forbidden(), nil
	}}
}

func TestCheckOverGRPC(t *testing.T) {
	panicky := funcStep{name: "step/faulty", fn: func(context.Context, *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
		panic("faulty plugin")
	}}
	reg := registryOf(t, time.Minute, map[string][]chain.Step{
		"ns.plugin-auth": {requiredHeader("x-required", "alpha", "beta")},
		"ns.panics":      {panicky},
	})
	client, _ := grpcClient(t, server.NewAuthorizer(reg, testLogger(t), nil))

	okResp := &authv3.CheckResponse{
		Status: &rpcstatus.Status{Code: int32(code.Code_OK)},
		HttpResponse: &authv3.CheckResponse_OkResponse{OkResponse: &authv3.OkHttpResponse{
			Headers: []*corev3.HeaderValueOption{hvo("matched-allowed-headers", "true", overwrite)},
		}},
	}
	tests := []struct {
		name string
		req  *authv3.CheckRequest
		want *authv3.CheckResponse
	}{
		{name: "allowed", req: checkRequest("ns.plugin-auth", map[string]string{"x-required": "alpha"}), want: okResp},
		{name: "value not allowed", req: checkRequest("ns.plugin-auth", map[string]string{"x-required": "gamma"}), want: denied(code.Code_PERMISSION_DENIED, 403, "")},
		{name: "header missing", req: checkRequest("ns.plugin-auth", nil), want: denied(code.Code_PERMISSION_DENIED, 403, "")},
		{name: "unknown config_id", req: checkRequest("ns.unknown", map[string]string{"x-required": "alpha"}), want: denied(code.Code_PERMISSION_DENIED, 403, "")},
		{name: "no context extensions", req: &authv3.CheckRequest{}, want: denied(code.Code_PERMISSION_DENIED, 403, "")},
		{name: "step panics", req: checkRequest("ns.panics", nil), want: denied(code.Code_UNAVAILABLE, 500, "")},
		{name: "answers after a panic", req: checkRequest("ns.plugin-auth", map[string]string{"x-required": "beta"}), want: okResp},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			got, err := client.Check(ctx, tt.req)
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, protocmp.Transform(), sortHeaders); diff != "" {
				t.Errorf("CheckResponse (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckConcurrentRequestsOverGRPC(t *testing.T) {
	reg := registryOf(t, time.Minute, map[string][]chain.Step{"ns.plugin-auth": {requiredHeader("x-required", "alpha")}})
	client, _ := grpcClient(t, server.NewAuthorizer(reg, testLogger(t), nil))
	var wg sync.WaitGroup
	codes := make([]int32, 64)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := "alpha"
			if i%2 == 1 {
				v = "nope"
			}
			resp, err := client.Check(context.Background(), checkRequest("ns.plugin-auth", map[string]string{"x-required": v}))
			if err != nil {
				codes[i] = -1
				return
			}
			codes[i] = resp.GetStatus().GetCode()
		}()
	}
	wg.Wait()
	for i, c := range codes {
		want := int32(code.Code_OK)
		if i%2 == 1 {
			want = int32(code.Code_PERMISSION_DENIED)
		}
		if c != want {
			t.Errorf("request %d: code %d, want %d", i, c, want)
		}
	}
}

func TestFailuresAreLoggedWithTheRequestID(t *testing.T) {
	tests := []struct {
		name      string
		step      funcStep
		timeout   time.Duration
		wantErr   string
		wantStack bool
	}{
		{
			name: "error",
			step: funcStep{name: "step/faulty", fn: func(context.Context, *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
				return nil, errors.New("backend down")
			}},
			wantErr: "step/faulty: backend down",
		},
		{
			name: "panic",
			step: funcStep{name: "step/faulty", fn: func(context.Context, *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
				panic("faulty plugin")
			}},
			wantErr:   "step/faulty: panic: faulty plugin",
			wantStack: true,
		},
		{
			name: "deadline",
			step: funcStep{name: "step/faulty", fn: func(ctx context.Context, _ *pluginapi.AuthorizationRequest) (*pluginapi.AuthorizationResponse, error) {
				<-ctx.Done()
				return nil, ctx.Err()
			}},
			timeout: 10 * time.Millisecond,
			wantErr: "step/faulty: context deadline exceeded",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			timeout := tt.timeout
			if timeout == 0 {
				timeout = time.Minute
			}
			var buf syncbuf.Buffer
			a := server.NewAuthorizer(registryOf(t, timeout, map[string][]chain.Step{"ns.x": {tt.step}}), zerolog.New(&buf), nil)
			if _, err := a.Check(context.Background(), checkRequest("ns.x", nil)); err != nil {
				t.Fatal(err)
			}
			var line map[string]any
			if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
				t.Fatalf("log %q: %v", buf.String(), err)
			}
			want := map[string]any{
				"level": "error", "config_id": "ns.x", "request_id": "req-1", "step": "step/faulty",
				"error": tt.wantErr, "status": float64(500), "message": "step failed; denying",
			}
			_, hasStack := line["stack"]
			delete(line, "stack")
			if diff := cmp.Diff(want, line); diff != "" {
				t.Errorf("log line (-want +got):\n%s", diff)
			}
			if hasStack != tt.wantStack {
				t.Errorf("stack logged = %v, want %v", hasStack, tt.wantStack)
			}
		})
	}
}
