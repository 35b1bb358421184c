package devgateway_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	faultv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/fault/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	discoveryv3 "github.com/envoyproxy/go-control-plane/envoy/service/discovery/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	cachev3 "github.com/envoyproxy/go-control-plane/pkg/cache/v3"
	serverv3 "github.com/envoyproxy/go-control-plane/pkg/server/v3"
	"google.golang.org/grpc"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/devgateway"
	"gatehouse.dev/gatehouse/server/xdsclient"
)

// controlPlane is a real go-control-plane ADS server with a snapshot cache on a free
// loopback port, recording the NACKs it gets.
type controlPlane struct {
	addr  string
	cache cachev3.SnapshotCache
	grpc  *grpc.Server
	mu    sync.Mutex
	nacks []string
}

func startControlPlane(t *testing.T) *controlPlane {
	t.Helper()
	cp := &controlPlane{cache: cachev3.NewSnapshotCache(true, cachev3.IDHash{}, nil)}
	cb := serverv3.CallbackFuncs{StreamDeltaRequestFunc: func(_ int64, req *discoveryv3.DeltaDiscoveryRequest) error {
		if d := req.GetErrorDetail(); d != nil {
			cp.mu.Lock()
			cp.nacks = append(cp.nacks, d.GetMessage())
			cp.mu.Unlock()
		}
		return nil
	}}
	ctx, cancel := context.WithCancel(context.Background())
	cp.grpc = grpc.NewServer()
	discoveryv3.RegisterAggregatedDiscoveryServiceServer(cp.grpc, serverv3.NewServer(ctx, cp.cache, cb))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cp.addr = lis.Addr().String()
	go func() { _ = cp.grpc.Serve(lis) }()
	t.Cleanup(func() { cp.grpc.Stop(); cancel() })
	return cp
}

func (cp *controlPlane) set(t *testing.T, node, version string, rs ...types.Resource) {
	t.Helper()
	byType := map[string][]types.Resource{}
	for _, r := range rs {
		byType[typeOf(r)] = append(byType[typeOf(r)], r)
	}
	snap, err := cachev3.NewSnapshot(version, byType)
	if err != nil {
		t.Fatal(err)
	}
	if err := cp.cache.SetSnapshot(context.Background(), node, snap); err != nil {
		t.Fatal(err)
	}
}

func (cp *controlPlane) nacked() []string {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return append([]string(nil), cp.nacks...)
}

// eventually polls cond until it holds or a generous deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestProxyOverADS runs the gateway's xDS path end to end: a real go-control-plane
// server over gRPC, the delta ADS client (server/xdsclient) handing every type to
// Proxy.Handle, a real ext_authz gRPC server and real upstreams.
func TestProxyOverADS(t *testing.T) {
	cp := startControlPlane(t)
	authz := &authzServer{}
	authzAddr := startAuthz(t, authz)
	a, b := tagged(t, "a"), tagged(t, "b")
	p, url := newProxy(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- xdsclient.Run(ctx, xdsclient.Options{
			Addr: cp.addr, NodeID: "gateway-1", Role: xds.DefaultProxyRole, Types: devgateway.Types,
			Log: newTestLog(t), Handle: p.Handle, MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond,
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("xdsclient.Run: %v", err)
		}
	})
	status := func(path string) (int, string) {
		resp, _ := do(t, "GET", url+path, "app.example", nil)
		return resp.StatusCode, resp.Header.Get("X-Upstream")
	}
	if s, _ := status("/open"); s != http.StatusServiceUnavailable {
		t.Fatalf("before any config: %d, want 503", s)
	}

	base := func(echo string) []types.Resource {
		return []types.Resource{http2Cluster(t, "ns.extauth"), edsCluster("ns.echo"), cla(t, "ns.extauth", authzAddr),
			cla(t, "ns.echo", echo), httpListener(t, "ns.extauth", time.Second), appRoutes(t)}
	}
	cp.set(t, "gateway-1", "1", base(a)...)
	eventually(t, "the first config served", func() bool { s, u := status("/open"); return s == http.StatusOK && u == "a" })

	before := len(authz.requests())
	if s, u := status("/app"); s != http.StatusOK || u != "a" {
		t.Errorf("secured route: %d from %q, want 200 from a", s, u)
	}
	reqs := authz.requests()[before:]
	if len(reqs) != 1 || reqs[0].GetAttributes().GetContextExtensions()["config_id"] != "ns.app" {
		t.Errorf("Checks for the secured route: %v", reqs)
	}

	t.Run("endpoints move", func(t *testing.T) {
		cp.set(t, "gateway-1", "2", base(b)...)
		eventually(t, "traffic on b", func() bool { s, u := status("/open"); return s == http.StatusOK && u == "b" })
	})

	t.Run("a refused listener is NACKed and the last config keeps serving", func(t *testing.T) {
		bad := hcm(t, "http", &hcmv3.HttpFilter{Name: "envoy.filters.http.fault", ConfigType: &hcmv3.HttpFilter_TypedConfig{TypedConfig: mustAny(t, &faultv3.HTTPFault{})}},
			extAuthzFilter(t, "ns.extauth", time.Second), routerFilter(t))
		rs := base(b)
		rs[4] = listenerWith(t, "http", devgateway.HTTPPort, bad)
		cp.set(t, "gateway-1", "3", rs...)
		eventually(t, "the NACK", func() bool {
			for _, n := range cp.nacked() {
				if strings.Contains(n, "filter envoy.filters.http.fault") {
					return true
				}
			}
			return false
		})
		if s, u := status("/open"); s != http.StatusOK || u != "b" {
			t.Errorf("after the NACK: %d from %q, want 200 from b", s, u)
		}
	})

	t.Run("the control plane goes away", func(t *testing.T) {
		cp.grpc.Stop()
		for range 5 {
			if s, u := status("/open"); s != http.StatusOK || u != "b" {
				t.Fatalf("without a control plane: %d from %q, want 200 from b", s, u)
			}
		}
		if !p.Ready(devgateway.HTTPPort) {
			t.Error("not ready after the control plane went away")
		}
	})
}
