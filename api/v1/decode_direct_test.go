package v1

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var buildCases = []struct{ name, yaml string }{
	{"virtual service", `apiVersion: gateway.gatehouse.dev/v1
kind: VirtualService
metadata: {name: vs, labels: {a: b, c: null}}
spec:
  virtualHost:
    domains: [a.example.com, 'b.example.com']
    routes:
      - matchers: [{prefix: /open}]
        routeAction: {single: {upstream: {name: up}}}
      - matchers: []
        routeAction: {single: {kube: {ref: {name: svc, port: 8080}}}}
        options:
          extauth: {configRef: {name: ac, namespace: other}}
          headerManipulation: {requestHeadersToRemove: [x-a, null]}
`},
	{"auth config with a free-form config", `apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata:
  name: ac
spec:
  configs:
    - pluginAuth:
        name: required_header
        config:
          z: [1, -2, "3", true, null, {b: a, a: 'x<y>&z'}]
          a: {}
          empty: []
    - pluginAuth: {name: other, config: null}
`},
	{"auth config with a free-form config of every scalar the fast path parses", `apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: ac}
spec:
  configs:
    - pluginAuth:
        name: p
        config: {neg: -0, big: 922337203685477580, small: -92233720368547758, t: True, F: FALSE, y: yes, n: ~, e: null}
    - pluginAuth:
        name: p
        config: {q: a<b, r: 'x&y', s: '\', d: "a", x: '', sp: 'a b', zz: 'say "hi"'}
    - pluginAuth:
        name: p
        config:
          - {b: 1, a: 2, c: {z: 0, y: [-7, 0, 12]}}
          - [[], {}]
`},
	{"upstream", "apiVersion: core.gatehouse.dev/v1\nkind: Upstream\nmetadata: {name: up, namespace: ns}\nspec:\n  static:\n    hosts: [{addr: 10.0.0.1, port: 80}]\n    useTls: false\n"},
	{"settings", "apiVersion: core.gatehouse.dev/v1\nkind: Settings\nmetadata: {name: s}\nspec:\n  devMode: true\n  extauth: {requestTimeout: 200ms, extauthzServerRef: {name: e}, tls: {sdsDir: /etc/envoy}}\n  discovery: {enabled: false, namespaces: [], labels: {}}\n"},
	{"secret", "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\ntype: kubernetes.io/tls\ndata: {a: aGVsbG8=, b: '', c: null}\nstringData: {d: e}\n"},
}

// TestBuildIsTheJSONRoundTrip: what build makes of a fast-path document is what the
// JSON round trip makes of it, for the cases above and every resource of the
// repository's YAML files the fast path takes.
func TestBuildIsTheJSONRoundTrip(t *testing.T) {
	for _, c := range buildCases {
		t.Run(c.name, func(t *testing.T) {
			if !sameAsRoundTrip(t, []byte(c.yaml)) {
				t.Error("build declined it")
			}
		})
	}
	built := eachRepositoryYAML(t, sameAsRoundTrip)
	if built == 0 {
		t.Error("build made none of the repository's resources")
	}
	t.Logf("build made %d resources of the repository", built)
}

// sameAsRoundTrip fails t when build and the round trip decode data differently. It
// says whether build made a resource of it.
func sameAsRoundTrip(t *testing.T, data []byte) bool {
	t.Helper()
	docs := fastDocuments(data)
	if len(docs) != 1 || duplicateKeys(docs[0]) {
		return false
	}
	root := docs[0].Content[0]
	tm, err := typeMeta(root)
	if err != nil {
		return false
	}
	var typ reflect.Type
	switch {
	case tm.Kind == KindAuthConfig && tm.APIVersion == AuthConfigAPIVersion:
		typ = reflect.TypeFor[AuthConfig]()
	case tm.Kind == KindVirtualService && tm.APIVersion == VirtualServiceAPIVersion:
		typ = reflect.TypeFor[VirtualService]()
	case tm.Kind == KindUpstream && tm.APIVersion == CoreAPIVersion:
		typ = reflect.TypeFor[Upstream]()
	case tm.Kind == KindSettings && tm.APIVersion == CoreAPIVersion:
		typ = reflect.TypeFor[Settings]()
	case tm.Kind == KindSecret && tm.APIVersion == SecretAPIVersion:
		typ = reflect.TypeFor[Secret]()
	default:
		return false
	}
	if len(checkFields(root, typ)) > 0 {
		return false
	}
	direct := reflect.New(typ)
	if !build(root, direct.Elem()) {
		t.Fatalf("build declined a document checkFields accepts:\n%s", data)
	}
	var generic any
	if err := root.Decode(&generic); err != nil {
		t.Fatal(err)
	}
	viaJSON := reflect.New(typ)
	if err := decodeJSON(document{root: root, generic: generic}, viaJSON.Interface()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(viaJSON.Interface(), direct.Interface()); diff != "" {
		t.Fatalf("build differs from the JSON round trip (-json +build):\n%s\n%s", diff, data)
	}
	return true
}

// FuzzBuild: whatever a fast-path resource holds, build makes of it what the JSON round
// trip makes.
func FuzzBuild(f *testing.F) {
	for _, c := range buildCases {
		f.Add([]byte(c.yaml))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sameAsRoundTrip(t, data)
	})
}
