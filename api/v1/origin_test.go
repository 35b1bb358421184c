package v1_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
)

func TestOriginNamesFileAndLine(t *testing.T) {
	set := &apiv1.Set{}
	a := `apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: one}
spec: {configs: []}
---

apiVersion: core.gatehouse.dev/v1
kind: Upstream
metadata: {name: up}
spec: {static: {hosts: [{addr: 127.0.0.1, port: 80}]}}
`
	b := `# comment
apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: one}
spec: {configs: []}
`
	for _, f := range []struct{ name, data string }{{"a.yaml", a}, {"b.yaml", b}} {
		if err := set.Add([]byte(f.data), f.name); err != nil {
			t.Fatal(err)
		}
	}
	got := []string{set.Origin(set.AuthConfigs[0]), set.Origin(set.Upstreams[0]), set.Origin(set.AuthConfigs[1])}
	if diff := cmp.Diff([]string{"a.yaml:1", "a.yaml:7", "b.yaml:2"}, got); diff != "" {
		t.Errorf("origins (-want +got):\n%s", diff)
	}
	if got := set.Origin(&apiv1.AuthConfig{}); got != "" {
		t.Errorf("Origin of a resource not read = %q, want empty", got)
	}
}
