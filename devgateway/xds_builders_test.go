package devgateway_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpointv3 "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listenerv3 "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	extauthzv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ext_authz/v3"
	routerv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	httpv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	resourcev3 "github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"github.com/rs/zerolog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"

	"gatehouse.dev/gatehouse/devgateway"
)

// Envoy resources in the shapes CONTRACT.md ("Envoy output") describes.

func mustAny(t *testing.T, m proto.Message) *anypb.Any {
	t.Helper()
	a, err := anypb.New(m)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func ads() *corev3.ConfigSource {
	return &corev3.ConfigSource{
		ConfigSourceSpecifier: &corev3.ConfigSource_Ads{Ads: &corev3.AggregatedConfigSource{}},
		ResourceApiVersion:    corev3.ApiVersion_V3,
	}
}

func extAuthzFilter(t *testing.T, cluster string, timeout time.Duration) *hcmv3.HttpFilter {
	return &hcmv3.HttpFilter{Name: devgateway.ExtAuthzFilterName, ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(t, &extauthzv3.ExtAuthz{
		Services: &extauthzv3.ExtAuthz_GrpcService{GrpcService: &corev3.GrpcService{
			TargetSpecifier: &corev3.GrpcService_EnvoyGrpc_{EnvoyGrpc: &corev3.GrpcService_EnvoyGrpc{ClusterName: cluster}},
			Timeout:         durationpb.New(timeout),
		}},
		FailureModeAllow:    false,
		TransportApiVersion: corev3.ApiVersion_V3,
	})}}
}

func routerFilter(t *testing.T) *hcmv3.HttpFilter {
	return &hcmv3.HttpFilter{Name: "envoy.filters.http.router", ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(t, &routerv3.Router{})}}
}

func hcm(t *testing.T, routeConfig string, filters ...*hcmv3.HttpFilter) *hcmv3.HttpConnectionManager {
	return &hcmv3.HttpConnectionManager{
		StatPrefix: "http",
		RouteSpecifier: &hcmv3.HttpConnectionManager_Rds{Rds: &hcmv3.Rds{
			ConfigSource: ads(), RouteConfigName: routeConfig,
		}},
		HttpFilters: filters,
	}
}

func listenerWith(t *testing.T, name string, port uint32, h *hcmv3.HttpConnectionManager) *listenerv3.Listener {
	return &listenerv3.Listener{
		Name: name,
		Address: &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
			Address: "0.0.0.0", PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: port},
		}}},
		FilterChains: []*listenerv3.FilterChain{{Filters: []*listenerv3.Filter{{
			Name:       "envoy.filters.network.http_connection_manager",
			ConfigType: &listenerv3.Filter_TypedConfig{TypedConfig: mustAny(t, h)},
		}}}},
	}
}

// httpListener is the "http" listener on 8080: RDS "http", ext_authz on authzCluster, router.
func httpListener(t *testing.T, authzCluster string, timeout time.Duration) *listenerv3.Listener {
	return listenerWith(t, "http", devgateway.HTTPPort, hcm(t, "http", extAuthzFilter(t, authzCluster, timeout), routerFilter(t)))
}

func edsCluster(name string) *clusterv3.Cluster {
	return &clusterv3.Cluster{
		Name:                 name,
		ClusterDiscoveryType: &clusterv3.Cluster_Type{Type: clusterv3.Cluster_EDS},
		EdsClusterConfig:     &clusterv3.Cluster_EdsClusterConfig{EdsConfig: ads()},
		ConnectTimeout:       durationpb.New(5 * time.Second),
	}
}

// http2Cluster is an EDS cluster with explicit HTTP/2, as the extauth cluster is.
func http2Cluster(t *testing.T, name string) *clusterv3.Cluster {
	c := edsCluster(name)
	c.TypedExtensionProtocolOptions = map[string]*anypb.Any{
		"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": mustAny(t, &httpv3.HttpProtocolOptions{
			UpstreamProtocolOptions: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_{ExplicitHttpConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig{
				ProtocolConfig: &httpv3.HttpProtocolOptions_ExplicitHttpConfig_Http2ProtocolOptions{Http2ProtocolOptions: &corev3.Http2ProtocolOptions{}},
			}},
		}),
	}
	return c
}

func cla(t *testing.T, name string, addrs ...string) *endpointv3.ClusterLoadAssignment {
	var lbs []*endpointv3.LbEndpoint
	for _, a := range addrs {
		host, port, err := net.SplitHostPort(a)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := strconv.Atoi(port)
		lbs = append(lbs, &endpointv3.LbEndpoint{HostIdentifier: &endpointv3.LbEndpoint_Endpoint{Endpoint: &endpointv3.Endpoint{
			Address: &corev3.Address{Address: &corev3.Address_SocketAddress{SocketAddress: &corev3.SocketAddress{
				Address: host, PortSpecifier: &corev3.SocketAddress_PortValue{PortValue: uint32(p)},
			}}},
		}}})
	}
	return &endpointv3.ClusterLoadAssignment{ClusterName: name, Endpoints: []*endpointv3.LocalityLbEndpoints{{LbEndpoints: lbs}}}
}

// typeOf is the xDS type URL of a resource.
func typeOf(m proto.Message) string {
	return resourcev3.APITypePrefix + string(m.ProtoReflect().Descriptor().FullName())
}

// set is the full set of one type's resources, keyed by name, as Handle takes it.
func set(t *testing.T, ms ...types.Resource) map[string]*anypb.Any {
	out := map[string]*anypb.Any{}
	for _, m := range ms {
		out[cachev3.GetResourceName(m)] = mustAny(t, m)
	}
	return out
}

// feed hands each type's resources to the proxy in the control plane's order and fails
// the test on a NACK.
func feed(t *testing.T, p *devgateway.Proxy, ms ...types.Resource) {
	t.Helper()
	byType := map[string][]types.Resource{}
	for _, m := range ms {
		byType[typeOf(m)] = append(byType[typeOf(m)], m)
	}
	for _, typ := range devgateway.Types {
		if rs, ok := byType[typ]; ok {
			if err := p.Handle(typ, set(t, rs...)); err != nil {
				t.Fatalf("Handle(%s): %v", typ, err)
			}
		}
	}
}

// newProxy serves the proxy's HTTP listener on a free loopback port and returns its URL.
func newProxy(t *testing.T) (*devgateway.Proxy, string) {
	t.Helper()
	p := devgateway.NewProxy(devgateway.ProxyOptions{Log: newTestLog(t)})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, devgateway.HTTPPort, lis) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		p.Close()
	})
	return p, "http://" + lis.Addr().String()
}

// authzServer is a real ext_authz gRPC server that records every Check.
type authzServer struct {
	authv3.UnimplementedAuthorizationServer
	mu     sync.Mutex
	reqs   []*authv3.CheckRequest
	answer func(ctx context.Context, req *authv3.CheckRequest) (*authv3.CheckResponse, error)
}

func (s *authzServer) Check(ctx context.Context, req *authv3.CheckRequest) (*authv3.CheckResponse, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	answer := s.answer
	s.mu.Unlock()
	if answer == nil {
		return okResponse(), nil
	}
	return answer(ctx, req)
}

func (s *authzServer) requests() []*authv3.CheckRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*authv3.CheckRequest(nil), s.reqs...)
}

func (s *authzServer) setAnswer(f func(ctx context.Context, req *authv3.CheckRequest) (*authv3.CheckResponse, error)) {
	s.mu.Lock()
	s.answer = f
	s.mu.Unlock()
}

// startAuthz serves s over gRPC on a free loopback port and returns its address.
func startAuthz(t *testing.T, s *authzServer) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer()
	authv3.RegisterAuthorizationServer(g, s)
	healthpb.RegisterHealthServer(g, health.NewServer()) // SERVING, for the extauth cluster's health checks
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
	return lis.Addr().String()
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	return addr
}

func newUnstartedEcho(t *testing.T) *httptest.Server {
	h := devgateway.Echo()
	return httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Proto", r.Proto)
		h.ServeHTTP(w, r)
	}))
}

// testLog writes a Proxy's log to the test's log until the test ends: a connection's
// goroutine may still log after that (a TLS handshake error, say).
type testLog struct {
	mu   sync.Mutex
	t    *testing.T
	done bool
}

func newTestLog(t *testing.T) zerolog.Logger {
	w := &testLog{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	return zerolog.New(w)
}

func (w *testLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimSpace(string(p)))
	}
	return len(p), nil
}
