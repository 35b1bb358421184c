package v1_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "gatehouse.dev/gatehouse/api/v1"
)

const (
	authConfigHead     = "apiVersion: enterprise.gateway.gatehouse.dev/v1\nkind: AuthConfig\nmetadata: {name: plugin-auth}\n"
	virtualServiceHead = "apiVersion: gateway.gatehouse.dev/v1\nkind: VirtualService\nmetadata: {name: api}\n"
	upstreamHead       = "apiVersion: core.gatehouse.dev/v1\nkind: Upstream\nmetadata: {name: u, namespace: ns}\n"
	secretHead         = "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n"
)

// Each field problem is reported with the resource, the field's path in YAML names and
// the line the field is on; all of a document's problems at once, in line order.
func TestAddFieldErrors(t *testing.T) {
	tests := []struct {
		name     string
		yaml     string
		wantErrs []string
	}{
		{
			name: "misspelt field, with the likely one",
			yaml: authConfigHead + "spec:\n  configs:\n    - pluginAut:\n        name: a\n",
			wantErrs: []string{
				`x.yaml:6: AuthConfig default.plugin-auth: spec.configs[0].pluginAut: unknown field (did you mean pluginAuth?)`,
			},
		},
		{
			name: "field in another case is unknown, and the right case suggested",
			yaml: authConfigHead + "spec: {configs: [{PluginAuth: {name: a}}, {pluginauth: {name: b}}]}\n",
			wantErrs: []string{
				`x.yaml:4: AuthConfig default.plugin-auth: spec.configs[0].PluginAuth: unknown field (did you mean pluginAuth?)`,
				`x.yaml:4: AuthConfig default.plugin-auth: spec.configs[1].pluginauth: unknown field (did you mean pluginAuth?)`,
			},
		},
		{
			name:     "nothing close enough to suggest",
			yaml:     upstreamHead + "spec: {static: {hosts: [{addr: a, port: 1, x: 2}]}}\n",
			wantErrs: []string{`x.yaml:4: Upstream ns.u: spec.static.hosts[0].x: unknown field`},
		},
		{
			name: "every problem of a document, in line order",
			yaml: virtualServiceHead + `spec:
  virtualHost:
    domains: "*"
    routes:
      - matchers: [{prefix: /}]
        routeAction: {single: {upstream: {name: echo, namespcae: ns}}}
      - matchers:
          - prefix: [/a, /b]
        options:
          extauth: {configRef: {name: a}}
          jwt:
            providers:
              okta: {isuer: https://example.com, tokenSource: {headers: [{header: 1}]}}
`,
			wantErrs: []string{
				`x.yaml:6: VirtualService default.api: spec.virtualHost.domains: want a list, got a string`,
				`x.yaml:9: VirtualService default.api: spec.virtualHost.routes[0].routeAction.single.upstream.namespcae: unknown field (did you mean namespace?)`,
				`x.yaml:11: VirtualService default.api: spec.virtualHost.routes[1].matchers[0].prefix: want a string, got a list`,
				`x.yaml:16: VirtualService default.api: spec.virtualHost.routes[1].options.jwt.providers.okta.isuer: unknown field (did you mean issuer?)`,
				`x.yaml:16: VirtualService default.api: spec.virtualHost.routes[1].options.jwt.providers.okta.tokenSource.headers[0].header: want a string, got a number`,
			},
		},
		{
			name: "scalar types",
			yaml: upstreamHead + `spec:
  static:
    useTls: "yes"
    hosts:
      - {addr: 10.0.0.1, port: "8090"}
      - {addr: 2024-01-01, port: 80.5}
      - {addr: {ip: a}, port: 99999999999999999999}
`,
			wantErrs: []string{
				`x.yaml:6: Upstream ns.u: spec.static.useTls: want a boolean (true or false), got a string`,
				`x.yaml:8: Upstream ns.u: spec.static.hosts[0].port: want an integer, got a string`,
				`x.yaml:9: Upstream ns.u: spec.static.hosts[1].addr: want a string, got a date; quote it`,
				`x.yaml:9: Upstream ns.u: spec.static.hosts[1].port: want an integer, got a number with a fraction`,
				`x.yaml:10: Upstream ns.u: spec.static.hosts[2].addr: want a string, got a mapping`,
				`x.yaml:10: Upstream ns.u: spec.static.hosts[2].port: want an integer, got a number out of range`,
			},
		},
		{
			name:     "struct given a list",
			yaml:     upstreamHead + "spec:\n  static: [a]\n",
			wantErrs: []string{`x.yaml:5: Upstream ns.u: spec.static: want a mapping, got a list`},
		},
		{
			name: "map keys must be strings, in typed maps and free-form config alike",
			yaml: `apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata:
  name: a
  labels: {8080: http}
spec:
  configs:
    - pluginAuth:
        name: p
        config: {Ports: {true: 1}, Limits: [.inf]}
`,
			wantErrs: []string{
				`x.yaml:5: AuthConfig default.a: metadata.labels.8080: key is a number; quote it to make it a string`,
				`x.yaml:10: AuthConfig default.a: spec.configs[0].pluginAuth.config.Ports.true: key is a boolean; quote it to make it a string`,
				`x.yaml:10: AuthConfig default.a: spec.configs[0].pluginAuth.config.Limits[0]: JSON has no infinity or NaN; quote it to make it a string`,
			},
		},
		{
			name: "Secret data must be base64, and the value never appears",
			yaml: secretHead + "data:\n  client-secret: \"hunter2!\"\n  other: 12\nstringData: {plain: [x]}\n",
			wantErrs: []string{
				`x.yaml:5: Secret default.s: data.client-secret: want a base64 string: illegal base64 data at input byte 7`,
				`x.yaml:6: Secret default.s: data.other: want a base64 string, got a number`,
				`x.yaml:7: Secret default.s: stringData.plain: want a string, got a list`,
			},
		},
		{
			name: "a merged-in field is reported where it is written",
			yaml: upstreamHead + `spec:
  static:
    hosts:
      - &h {addr: a, port: 1, prot: 1}
      - {<<: *h, port: 2}
`,
			wantErrs: []string{
				`x.yaml:7: Upstream ns.u: spec.static.hosts[0].prot: unknown field (did you mean port?)`,
				`x.yaml:7: Upstream ns.u: spec.static.hosts[1].prot: unknown field (did you mean port?)`,
			},
		},
		{
			name: "a name that is not a string is a type error, not a missing name",
			yaml: "apiVersion: core.gatehouse.dev/v1\nkind: Settings\nmetadata: {name: [a], namespace: x}\nspec: {devMode: 1}\n",
			wantErrs: []string{
				`x.yaml:3: Settings: metadata.name: want a string, got a list`,
				`x.yaml:4: Settings: spec.devMode: want a boolean (true or false), got a number`,
			},
		},
		{
			name: "field problems and a missing name together",
			yaml: "apiVersion: core.gatehouse.dev/v1\nkind: Settings\nspec: {devmode: true}\n",
			wantErrs: []string{
				`x.yaml:1: Settings: metadata.name is required`,
				`x.yaml:3: Settings: spec.devmode: unknown field (did you mean devMode?)`,
			},
		},
		{
			name:     "kind that is not a string",
			yaml:     "apiVersion: v1\nkind: [Secret]\n",
			wantErrs: []string{`x.yaml:1: not a resource: kind: want a string, got a list`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := &apiv1.Set{}
			err := set.Add([]byte(tt.yaml), "x.yaml")
			if err == nil {
				t.Fatalf("Add: nil error, want %q", tt.wantErrs)
			}
			if diff := cmp.Diff(tt.wantErrs, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error shows a Secret's value: %v", err)
			}
			if n := len(set.AuthConfigs) + len(set.VirtualServices) + len(set.Upstreams) + len(set.Settings) + len(set.Secrets); n != 0 {
				t.Errorf("%d resources decoded from documents with errors, want 0", n)
			}
		})
	}
}

// What the field check accepts must still decode as before: nulls, integers written
// as JSON would take them, aliases and merges, and anything inside a plugin's config.
func TestAddFieldsAccepted(t *testing.T) {
	yaml := upstreamHead + `spec:
  kube: ~
  static:
    useTls:
    hosts:
      - &h {addr: a, port: 1e3}
      - *h
      - {<<: *h, port: 80.0}
      - {<<: [{addr: b}, *h]}
---
` + authConfigHead + `spec:
  configs:
    - pluginAuth:
        name: p
        config: {pluginAut: 1, port: "x", nested: {when: 2024-01-01, none: ~}}
`
	set := &apiv1.Set{}
	if err := set.Add([]byte(yaml), "x.yaml"); err != nil {
		t.Fatalf("Add: %v", err)
	}
	if len(set.Upstreams) != 1 || len(set.AuthConfigs) != 1 {
		t.Fatalf("decoded %d Upstreams and %d AuthConfigs, want 1 each", len(set.Upstreams), len(set.AuthConfigs))
	}
	got := set.Upstreams[0].Spec.Static.Hosts
	want := []apiv1.Host{{Addr: "a", Port: 1000}, {Addr: "a", Port: 1000}, {Addr: "a", Port: 80}, {Addr: "b", Port: 1000}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hosts (-want +got):\n%s", diff)
	}
}
