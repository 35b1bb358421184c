package helm_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
			s := renderedSettings(t, tc.values)
			if s.VirtualHostDiscovery != tc.want {
				t.Errorf("virtualHostDiscovery %t, want %t", s.VirtualHostDiscovery, tc.want)
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
