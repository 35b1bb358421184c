package translate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/translate"
)

// TestVHDSSettingsAsDocumented: the Settings docs/controlplane.md shows for turning on
// virtual host discovery decode and turn it on, and the proxy's plain-text listener
// takes it.
func TestVHDSSettingsAsDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "controlplane.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "turn on\n  virtual host discovery (VHDS):")
	if !ok {
		t.Fatal("docs/controlplane.md no longer says how to turn on virtual host discovery")
	}
	_, block, _ := strings.Cut(rest, "```yaml\n")
	block, _, _ = strings.Cut(block, "```")
	var yaml strings.Builder
	for _, l := range strings.Split(block, "\n") {
		yaml.WriteString(strings.TrimPrefix(l, "  ") + "\n")
	}
	res, probs := source.Decode([]byte(yaml.String()), "controlplane.md")
	if len(probs) > 0 || len(res) != 1 {
		t.Fatalf("the documented Settings: %d resources, problems %v", len(res), probs)
	}
	s, ok := res[0].Object.(*apiv1.Settings)
	if !ok {
		t.Fatalf("the documented resource is a %T", res[0].Object)
	}
	got, err := translate.SettingsOf(s)
	if err != nil || !got.VirtualHostDiscovery {
		t.Fatalf("SettingsOf: %+v, %v; want virtualHostDiscovery on", got, err)
	}
	ps := translate.Proxies(translate.Accepted{Settings: got})
	if l := ps[0].Listeners[0]; l.TLS || !l.VirtualHostDiscovery {
		t.Errorf("listener %s: tls %t, virtualHostDiscovery %t; want the plain-text listener on VHDS", l.Name, l.TLS, l.VirtualHostDiscovery)
	}
}
