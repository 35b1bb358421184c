package helm_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/translate"
)

// TestVirtualHostDiscoveryFromValues: settings.virtualHostDiscovery reaches the chart's
// Settings as spec.virtualHostDiscovery, which the control plane accepts; it is off by
// default; and the proxies the chart installs take their configuration over delta ADS,
// which VHDS needs.
func TestVirtualHostDiscoveryFromValues(t *testing.T) {
	for _, tc := range []struct {
		name, values string
		want         bool
	}{
		{name: "default"},
		{name: "on", values: "settings: {virtualHostDiscovery: true}", want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, ok := observed(t, tc.values)["Settings"]["default"]
			if !ok {
				t.Fatal("no Settings default rendered")
			}
			path := filepath.Join(t.TempDir(), "settings.yaml")
			if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			set, err := apiv1.Load(path)
			if err != nil || len(set.Settings) != 1 {
				t.Fatalf("the rendered Settings do not load: %v\n%s", err, doc)
			}
			s, err := translate.SettingsOf(set.Settings[0])
			if err != nil {
				t.Fatalf("the control plane rejects the rendered Settings: %v\n%s", err, doc)
			}
			if s.VirtualHostDiscovery != tc.want {
				t.Errorf("virtualHostDiscovery %t, want %t\n%s", s.VirtualHostDiscovery, tc.want, doc)
			}
		})
	}
	for _, f := range []string{"envoy-bootstrap.yaml", "envoy-bootstrap-mtls.yaml"} {
		b, err := os.ReadFile(filepath.Join(chartDir, "files", f))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), "api_type: DELTA_GRPC") {
			t.Errorf("%s: the proxies' ADS is not delta xDS, which VHDS needs", f)
		}
	}
}
