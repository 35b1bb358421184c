package kube_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"gatehouse.dev/gatehouse/internal/kubetest"
)

var env *kubetest.Env

func TestMain(m *testing.M) { os.Exit(kubetest.Main(m, &env)) }

var (
	vsGVR = schema.GroupVersionResource{Group: "gateway.gatehouse.dev", Version: "v1", Resource: "virtualservices"}
	acGVR = schema.GroupVersionResource{Group: "enterprise.gateway.gatehouse.dev", Version: "v1", Resource: "authconfigs"}
	usGVR = schema.GroupVersionResource{Group: "core.gatehouse.dev", Version: "v1", Resource: "upstreams"}
)

func object(t *testing.T, doc string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

// TestCRDsRejectInvalidObjects creates objects through the real API server with strict
// field validation (what kubectl apply does by default).
func TestCRDsRejectInvalidObjects(t *testing.T) {
	env.InstallCRDs(t)
	_, dyn := env.Clients(t)
	strict := metav1.CreateOptions{FieldValidation: "Strict"}
	tests := []struct {
		name    string
		gvr     schema.GroupVersionResource
		doc     string
		wantErr []string // substrings of the API server's error; none: accepted
	}{{
		name: "valid virtual service",
		gvr:  vsGVR,
		doc: `
apiVersion: gateway.gatehouse.dev/v1
kind: VirtualService
metadata: {name: ok, namespace: default}
spec:
  virtualHost:
    domains: [example.com]
    routes:
    - matchers: [{prefix: /}]
      routeAction: {single: {kube: {ref: {name: echo, port: 8080}}}}
      options: {extauth: {configRef: {name: auth}}}`,
	}, {
		name: "domains not a list",
		gvr:  vsGVR,
		doc: `
apiVersion: gateway.gatehouse.dev/v1
kind: VirtualService
metadata: {name: bad-type, namespace: default}
spec: {virtualHost: {domains: example.com, routes: []}}`,
		wantErr: []string{`spec.virtualHost.domains: Invalid value: "string"`},
	}, {
		name: "unknown field",
		gvr:  vsGVR,
		doc: `
apiVersion: gateway.gatehouse.dev/v1
kind: VirtualService
metadata: {name: unknown, namespace: default}
spec: {virtualHost: {domains: [a.com], routes: [], domain: b.com}}`,
		wantErr: []string{`unknown field "spec.virtualHost.domain"`},
	}, {
		name: "missing required port",
		gvr:  usGVR,
		doc: `
apiVersion: core.gatehouse.dev/v1
kind: Upstream
metadata: {name: no-port, namespace: default}
spec: {static: {hosts: [{addr: 127.0.0.1}]}}`,
		wantErr: []string{`spec.static.hosts[0].port: Required value`},
	}, {
		name: "plugin config is free-form",
		gvr:  acGVR,
		doc: `
apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: plugin, namespace: default}
spec:
  configs:
  - pluginAuth: {name: required_header, config: {RequiredHeader: x-a, AllowedValues: [a, b], Nested: {depth: 1}}}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := object(t, tt.doc)
			got, err := dyn.Resource(tt.gvr).Namespace("default").Create(context.Background(), obj, strict)
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Fatalf("create: %v", err)
				}
				if diff := cmp.Diff(normalized(t, obj.Object["spec"]), normalized(t, got.Object["spec"])); diff != "" {
					t.Errorf("stored spec differs (-sent +stored):\n%s", diff)
				}
				return
			}
			if err == nil {
				t.Fatalf("create accepted %s", tt.doc)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// normalized is v through JSON, so numbers compare as numbers whatever their Go type.
func normalized(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
