package translate_test

import (
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	"gatehouse.dev/gatehouse/controlplane/translate"
)

// TestExtauthClusterHealthChecks: a restarted extauth replica cost 54-171 wrongly
// denied requests, Envoy calling it while it was gone and while it had no config yet
// (issue 26). The extauth cluster health-checks its replicas over gRPC health, which
// extauth reports SERVING only from its first complete config until SIGTERM, with panic
// mode off; other clusters are not health-checked. Every cluster passes ValidateAll.
func TestExtauthClusterHealthChecks(t *testing.T) {
	ext := &translate.Extauthz{Cluster: "gatehouse-system.extauth"}
	tests := []struct {
		name    string
		cluster *translate.Cluster
		checked bool
	}{
		{name: "extauth over EDS", cluster: &translate.Cluster{Name: ext.Cluster, Hosts: []translate.Host{{Addr: "10.0.0.1", Port: 8083}, {Addr: "10.0.0.2", Port: 8083}}}},
		{name: "extauth by DNS", cluster: &translate.Cluster{Name: ext.Cluster, Hosts: []translate.Host{{Addr: "extauth.gatehouse-system", Port: 8083}}}},
		{name: "another cluster", cluster: &translate.Cluster{Name: "default.echo", Hosts: []translate.Host{{Addr: "10.0.0.3", Port: 80}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := translate.EnvoyCluster(tt.cluster, ext)
			if err := c.ValidateAll(); err != nil {
				t.Fatalf("ValidateAll: %v", err)
			}
			if tt.cluster.Name != ext.Cluster {
				if len(c.GetHealthChecks()) != 0 || c.GetCommonLbConfig() != nil {
					t.Errorf("cluster %s: health checks %v, lb config %v; want none", c.GetName(), c.GetHealthChecks(), c.GetCommonLbConfig())
				}
				return
			}
			if len(c.GetHealthChecks()) != 1 {
				t.Fatalf("health checks %v, want one", c.GetHealthChecks())
			}
			hc := c.GetHealthChecks()[0]
			if diff := cmp.Diff(&corev3.HealthCheck_GrpcHealthCheck{}, hc.GetGrpcHealthCheck(), protocmp.Transform()); diff != "" {
				t.Errorf("want a grpc_health_check of the whole server (service \"\") (-want +got):\n%s", diff)
			}
			if hc.GetInterval().AsDuration() != translate.ExtauthHealthInterval || hc.GetNoTrafficInterval().AsDuration() != translate.ExtauthHealthInterval {
				t.Errorf("interval %v, no-traffic interval %v; want %v for both", hc.GetInterval(), hc.GetNoTrafficInterval(), translate.ExtauthHealthInterval)
			}
			if p := c.GetCommonLbConfig().GetHealthyPanicThreshold(); p == nil || p.GetValue() != 0 {
				t.Errorf("healthy panic threshold %v, want 0 (panic mode off)", p)
			}
		})
	}
}
