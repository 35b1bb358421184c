package devgateway_test

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"

	"gatehouse.dev/gatehouse/devgateway"
)

// healthChecked is the ext_authz cluster as the control plane emits it: gRPC health
// checks (here every 50 ms) and panic mode off.
func healthChecked(t *testing.T, name string) *clusterv3.Cluster {
	c := http2Cluster(t, name)
	c.HealthChecks = []*corev3.HealthCheck{{
		Timeout: durationpb.New(time.Second), Interval: durationpb.New(50 * time.Millisecond),
		UnhealthyThreshold: wrapperspb.UInt32(2), HealthyThreshold: wrapperspb.UInt32(1),
		HealthChecker: &corev3.HealthCheck_GrpcHealthCheck_{GrpcHealthCheck: &corev3.HealthCheck_GrpcHealthCheck{}},
	}}
	c.CommonLbConfig = &clusterv3.Cluster_CommonLbConfig{HealthyPanicThreshold: &typev3.Percent{}}
	return c
}

// replica is an ext_authz server with gRPC health checking.
type replica struct {
	authz  *authzServer
	health *health.Server
	grpc   *grpc.Server
	addr   string
}

func startReplica(t *testing.T) *replica {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &replica{authz: &authzServer{}, health: health.NewServer(), grpc: grpc.NewServer(), addr: lis.Addr().String()}
	authv3.RegisterAuthorizationServer(r.grpc, r.authz)
	healthpb.RegisterHealthServer(r.grpc, r.health)
	go func() { _ = r.grpc.Serve(lis) }()
	t.Cleanup(r.grpc.Stop)
	return r
}

// TestProxyHealthChecksExtauth: the gateway kept sending Checks to an extauth replica
// that was stopping or gone (issue 26). In a health-checked ext_authz cluster it sends
// none to a replica that answers NOT_SERVING, and a Check that cannot reach a replica
// (stopped without warning) goes to the next one: no request fails. Counting, not timing.
func TestProxyHealthChecksExtauth(t *testing.T) {
	a, b := startReplica(t), startReplica(t)
	p, url := newProxy(t)
	feed(t, p, healthChecked(t, "ns.extauth"), edsCluster("ns.echo"), cla(t, "ns.extauth", a.addr, b.addr),
		cla(t, "ns.echo", tagged(t, "echo")), httpListener(t, "ns.extauth", time.Second), appRoutes(t))
	eventually(t, "the listener served after its first round of health checks", func() bool { return p.Ready(devgateway.HTTPPort) })
	get := func() int {
		resp, _ := do(t, "GET", url+"/app", "app.example", nil)
		return resp.StatusCode
	}
	eventually(t, "both replicas sent Checks", func() bool {
		get()
		return len(a.authz.requests()) > 0 && len(b.authz.requests()) > 0
	})

	a.health.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	// Once a's NOT_SERVING is seen, ten requests in a row go to b.
	eventually(t, "a out of rotation", func() bool {
		before := len(a.authz.requests())
		for range 10 {
			if get() != http.StatusOK {
				t.Fatal("a request failed while a replica was NOT_SERVING")
			}
		}
		return len(a.authz.requests()) == before
	})
	before := len(a.authz.requests())
	for range 20 {
		if s := get(); s != http.StatusOK {
			t.Fatalf("status %d with one replica NOT_SERVING", s)
		}
	}
	if n := len(a.authz.requests()) - before; n != 0 {
		t.Errorf("%d Checks went to the NOT_SERVING replica", n)
	}

	a.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	eventually(t, "a back in rotation", func() bool { get(); return len(a.authz.requests()) > before })
	b.grpc.Stop() // gone without a word: its first Checks fail to connect and go to a
	failed := 0
	for range 20 {
		if get() != http.StatusOK {
			failed++
		}
	}
	if failed != 0 {
		t.Errorf("%d of 20 requests failed after a replica was stopped", failed)
	}
}

// TestProxyRefusesHealthChecksItCannotHonour: only one gRPC health check, and panic mode
// off, are honoured; anything else is NACKed with its field path.
func TestProxyRefusesHealthChecksItCannotHonour(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(c *clusterv3.Cluster)
		wantErr string
	}{
		{"an HTTP health check", func(c *clusterv3.Cluster) {
			c.HealthChecks[0].HealthChecker = &corev3.HealthCheck_HttpHealthCheck_{HttpHealthCheck: &corev3.HealthCheck_HttpHealthCheck{Path: "/healthz"}}
		}, "health_checks[0]: only grpc_health_check is supported"},
		{"panic mode on", func(c *clusterv3.Cluster) {
			c.CommonLbConfig.HealthyPanicThreshold = &typev3.Percent{Value: 50}
		}, "common_lb_config.healthy_panic_threshold: only 0 (no panic mode) is supported"},
		{"two health checks", func(c *clusterv3.Cluster) {
			c.HealthChecks = append(c.HealthChecks, c.HealthChecks[0])
		}, "health_checks: only one health check is supported"},
		{"jitter", func(c *clusterv3.Cluster) {
			c.HealthChecks[0].IntervalJitter = durationpb.New(time.Second)
		}, "health_checks[0].interval_jitter: not supported by the dev gateway"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := healthChecked(t, "ns.extauth")
			tt.edit(c)
			p := devgateway.NewProxy(devgateway.ProxyOptions{Log: newTestLog(t)})
			t.Cleanup(p.Close)
			err := p.Handle(typeOf(c), set(t, c))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Handle = %v, want an error with %q", err, tt.wantErr)
			}
		})
	}
}
