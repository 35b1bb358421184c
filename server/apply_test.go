package server_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	extauthv1 "gatehouse.dev/gatehouse/api/extauth/v1"
	apiv1 "gatehouse.dev/gatehouse/api/v1"
	"gatehouse.dev/gatehouse/server"
	"gatehouse.dev/gatehouse/server/chain"
)

func TestApplyResources(t *testing.T) {
	const resources = `
apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: good, namespace: ns}
spec:
  configs:
    - pluginAuth: {name: required_header, exportedSymbolName: Plugin, config: {RequiredHeader: x}}
---
apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: empty, namespace: ns}
spec: {configs: []}
---
apiVersion: gateway.gatehouse.dev/v1
kind: VirtualService
metadata: {name: skipped, namespace: ns}
spec: {virtualHost: {routes: []}}
`
	set := &apiv1.Set{}
	if err := set.Add([]byte(resources), "r.yaml"); err != nil {
		t.Fatal(err)
	}
	var built []*extauthv1.ExtAuthConfig
	reg := server.NewRegistry(func(_ context.Context, cfg *extauthv1.ExtAuthConfig) (*chain.Chain, error) {
		built = append(built, cfg)
		return &chain.Chain{ID: cfg.GetConfigId()}, nil
	}, testLogger(t))
	st := server.ApplyResources(reg, set)
	want := []server.Status{
		{ID: "ns.empty", State: server.StateRejected, Reason: "authconfig ns.empty: spec.configs: at least one step is required"},
		{ID: "ns.good", State: server.StateAccepted},
	}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if len(built) != 1 || built[0].GetConfigId() != "ns.good" {
		t.Fatalf("built %v, want only ns.good", built)
	}
	pa := built[0].GetSteps()[0].GetPluginAuth()
	if pa.GetPluginFileName() != "required_header.so" || pa.GetExportedSymbolName() != "Plugin" ||
		!strings.Contains(pa.GetConfig().String(), "RequiredHeader") {
		t.Errorf("translated step = %v", pa)
	}
}

// Regression: a second file defining the same AuthConfig replaced the serving version
// when its name sorted first, while the status said the previous version kept serving.
func TestApplyResourcesDuplicateAcrossFiles(t *testing.T) {
	doc := func(header string) string {
		return `apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: app, namespace: ns}
spec:
  configs:
    - pluginAuth: {name: required_header, exportedSymbolName: Plugin, config: {RequiredHeader: ` + header + `}}
`
	}
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	load := func() *apiv1.Set {
		t.Helper()
		set, err := apiv1.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		return set
	}
	var built []string
	reg := server.NewRegistry(func(_ context.Context, cfg *extauthv1.ExtAuthConfig) (*chain.Chain, error) {
		built = append(built, cfg.GetSteps()[0].GetPluginAuth().GetConfig().String())
		return &chain.Chain{ID: cfg.GetConfigId()}, nil
	}, testLogger(t))
	write("b.yaml", doc("x-from-b"))
	server.ApplyResources(reg, load())
	serving, _ := reg.Lookup("ns.app")

	write("a.yaml", "# the same AuthConfig again\n"+doc("x-from-a"))
	st := server.ApplyResources(reg, load())
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	want := []server.Status{{ID: "ns.app", State: server.StateRejected, ServingPrevious: true,
		Reason: "authconfig ns.app is defined 2 times (" + a + ":2, " + b + ":1); none of them is applied: remove all but one"}}
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if c, _ := reg.Lookup("ns.app"); c != serving {
		t.Errorf("the serving chain was replaced")
	}
	if len(built) != 1 || !strings.Contains(built[0], "x-from-b") {
		t.Errorf("built %v, want only b.yaml's version", built)
	}

	// Removing one file ends it: the other is applied.
	if err := os.Remove(b); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]server.Status{{ID: "ns.app", State: server.StateAccepted}}, server.ApplyResources(reg, load())); diff != "" {
		t.Errorf("statuses after removing b.yaml (-want +got):\n%s", diff)
	}
	if len(built) != 2 || !strings.Contains(built[1], "x-from-a") {
		t.Errorf("built %v, want a.yaml's version last", built)
	}
}
