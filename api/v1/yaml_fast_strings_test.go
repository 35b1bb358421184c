package v1_test

import (
	"fmt"
	"testing"
	"unsafe"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
)

// TestDecodedResourcesShareShortStrings decodes the same AuthConfig under two names:
// the short scalars they repeat (namespace, plugin name, symbol) are one string each,
// and the resources are decoded as they are written. (Both are in one file: the
// parses of two files may use two caches.)
func TestDecodedResourcesShareShortStrings(t *testing.T) {
	doc := func(name string) []byte {
		return fmt.Appendf(nil, `apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata:
  name: %s
  namespace: team-a
spec:
  configs:
  - pluginAuth:
      name: required_header
      exportedSymbolName: Plugin
`, name)
	}
	set := &apiv1.Set{}
	if err := set.Add(append(append(doc("first"), "---\n"...), doc("second")...), "two.yaml"); err != nil {
		t.Fatal(err)
	}
	if len(set.AuthConfigs) != 2 {
		t.Fatalf("decoded %d AuthConfigs; want 2", len(set.AuthConfigs))
	}
	a, b := set.AuthConfigs[0], set.AuthConfigs[1]
	if a.Metadata.Name != "first" || b.Metadata.Name != "second" || a.APIVersion != apiv1.AuthConfigAPIVersion || a.Kind != apiv1.KindAuthConfig {
		t.Fatalf("decoded %+v and %+v", a.Metadata, b.Metadata)
	}
	for _, tt := range []struct {
		name string
		x, y string
	}{
		{"namespace", a.Metadata.Namespace, b.Metadata.Namespace},
		{"plugin name", a.Spec.Configs[0].PluginAuth.Name, b.Spec.Configs[0].PluginAuth.Name},
		{"symbol", a.Spec.Configs[0].PluginAuth.ExportedSymbolName, b.Spec.Configs[0].PluginAuth.ExportedSymbolName},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.x != tt.y || unsafe.StringData(tt.x) != unsafe.StringData(tt.y) {
				t.Errorf("%q and %q are two copies; want one string", tt.x, tt.y)
			}
		})
	}
}
