package clustertest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3" // the xds cluster's TLS context
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"        // resolves the bootstrap's typed options
	"google.golang.org/protobuf/encoding/protojson"
	"sigs.k8s.io/yaml"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/integration/testbin"
)

// TestGatewayProxyBootstrap: with mutual TLS (the default) and without, the bootstrap
// ConfigMap of every gateway proxy is what `gatehouse envoy bootstrap` prints for its role
// and the release's control plane (with --xds-tls-dir, and the SDS files `gatehouse envoy
// sds` writes beside it), and a bootstrap Envoy's own validation accepts.
func TestGatewayProxyBootstrap(t *testing.T) {
	for _, mode := range []struct {
		name, values string
		flags        []string
	}{
		{"plain", "mtls: {enabled: false}\n", nil},
		{"mutual TLS", "", []string{"--xds-tls-dir", "/etc/gatehouse/tls"}},
	} {
		t.Run(mode.name, func(t *testing.T) { gatewayProxyBootstrap(t, mode.values, mode.flags) })
	}
}

func gatewayProxyBootstrap(t *testing.T, values string, flags []string) {
	gh := testbin.Gatehouse(t)
	objs, err := render(t, "gatehouse-system", fullValues+values)
	if err != nil {
		t.Fatal(err)
	}
	sds := map[string]string{}
	if len(flags) > 0 {
		out := t.TempDir()
		if b, err := exec.Command(gh, "envoy", "sds", "--tls-dir", "/etc/gatehouse/tls", "--out", out).CombinedOutput(); err != nil {
			t.Fatalf("gatehouse envoy sds: %v\n%s", err, b)
		}
		for _, f := range []string{"sds-certificate.yaml", "sds-validation.yaml"} {
			b, err := os.ReadFile(filepath.Join(out, f))
			if err != nil {
				t.Fatal(err)
			}
			sds[f] = string(b)
		}
	}
	want := map[string]string{"gateway-proxy-envoy-config": xds.DefaultProxyRole, "public-gw-envoy-config": "gatehouse-system~public-gw"}
	for _, o := range objs {
		role, ok := want[o.GetName()]
		if o.GetKind() != "ConfigMap" || !ok {
			continue
		}
		delete(want, o.GetName())
		t.Run(o.GetName(), func(t *testing.T) {
			data, _ := o.Object["data"].(map[string]any)
			printed, err := exec.Command(gh, append([]string{"envoy", "bootstrap", "--xds", "controlplane.gatehouse-system.svc.cluster.local:9977",
				"--role", role, "--node-id", "gateway-proxy"}, flags...)...).Output()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(printed), data["envoy.yaml"]); diff != "" {
				t.Errorf("the chart's bootstrap differs from gatehouse envoy bootstrap's (-command +chart); run make generate:\n%s", diff)
			}
			for f, want := range sds {
				if diff := cmp.Diff(want, data[f]); diff != "" {
					t.Errorf("the chart's %s differs from gatehouse envoy sds's (-command +chart); run make generate:\n%s", f, diff)
				}
			}
			js, err := yaml.YAMLToJSON([]byte(data["envoy.yaml"].(string)))
			if err != nil {
				t.Fatal(err)
			}
			b := &bootstrapv3.Bootstrap{}
			if err := protojson.Unmarshal(js, b); err != nil {
				t.Fatalf("not an Envoy bootstrap: %v", err)
			}
			if err := b.ValidateAll(); err != nil {
				t.Fatalf("Envoy refuses the bootstrap: %v", err)
			}
			if got := b.GetNode().GetMetadata().GetFields()[xds.RoleKey].GetStringValue(); got != role {
				t.Errorf("node role %q, want %q", got, role)
			}
			if got := b.GetDynamicResources().GetAdsConfig().GetGrpcServices()[0].GetEnvoyGrpc().GetClusterName(); got != "xds_cluster" {
				t.Errorf("ADS cluster %q", got)
			}
			addr := b.GetStaticResources().GetClusters()[0].GetLoadAssignment().GetEndpoints()[0].GetLbEndpoints()[0].GetEndpoint().GetAddress().GetSocketAddress()
			if addr.GetAddress() != "controlplane.gatehouse-system.svc.cluster.local" || addr.GetPortValue() != 9977 {
				t.Errorf("xDS address %s:%d", addr.GetAddress(), addr.GetPortValue())
			}
		})
	}
	if len(want) > 0 {
		t.Errorf("no bootstrap ConfigMap %v", want)
	}
}
