package server_test

import (
	"context"
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
