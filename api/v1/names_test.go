package v1_test

import (
	"strings"
	"testing"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
)

// TestNamesAreKubernetesNames: names and namespaces were not validated at all, so a
// Secret named ../../escape in namespace ../.. was Accepted, and the AuthConfigs a/x.y
// and a.x/y both were, sharing the config_id a.x.y (a route enforced the other's
// policy). A name is now a DNS-1123 subdomain and a namespace a DNS-1123 label, as in
// Kubernetes; a namespace holds no ".", so config ids cannot collide.
func TestNamesAreKubernetesNames(t *testing.T) {
	doc := func(ns, name string) string {
		return "apiVersion: core.gatehouse.dev/v1\nkind: Upstream\nmetadata: {name: '" + name + "', namespace: '" + ns + "'}\nspec: {static: {hosts: [{addr: 127.0.0.1, port: 80}]}}\n"
	}
	for _, tc := range []struct {
		name, ns, resource string
		want               string // "" when accepted
	}{
		{"plain", "team-a", "echo", ""},
		{"a dotted name", "team-a", "x.y", ""},
		{"a dotted namespace", "a.x", "y", `metadata.namespace: "a.x" is not a valid namespace`},
		{"a name that climbs folders", "team-a", "../../escape", `metadata.name: "../../escape" is not a valid name`},
		{"a namespace that climbs folders", "../..", "x", `metadata.namespace: "../.." is not a valid namespace`},
		{"upper case", "team-a", "Echo", `metadata.name: "Echo" is not a valid name`},
		{"a slash", "team-a", "a/b", `metadata.name: "a/b" is not a valid name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s apiv1.Set
			err := s.Add([]byte(doc(tc.ns, tc.resource)), "u.yaml")
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			case tc.want != "" && len(s.Upstreams) != 0:
				t.Fatalf("the Upstream was kept")
			}
		})
	}
}
