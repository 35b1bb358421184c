package kube_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestStatusSubresourceAndColumns: the status subresource keeps status apart from spec
// (a status write does not bump generation), the Status printer column shows the state
// written for the control plane in gatehouse-system, and the short names are served.
func TestStatusSubresourceAndColumns(t *testing.T) {
	env.InstallCRDs(t)
	c, dyn := env.Clients(t)
	ctx := context.Background()
	vs := object(t, `
apiVersion: gateway.gatehouse.dev/v1
kind: VirtualService
metadata: {name: columns, namespace: default}
spec: {virtualHost: {domains: [columns.example], routes: []}}`)
	created, err := dyn.Resource(vsGVR).Namespace("default").Create(ctx, vs, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedMap(created.Object, map[string]any{"statuses": map[string]any{
		"gatehouse-system": map[string]any{"state": "Rejected", "reason": "spec.virtualHost.routes: at least one route is required", "reportedBy": "gatehouse", "observedGeneration": int64(1)},
	}}, "status"); err != nil {
		t.Fatal(err)
	}
	updated, err := dyn.Resource(vsGVR).Namespace("default").UpdateStatus(ctx, created, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update status: %v", err)
	}
	if updated.GetGeneration() != created.GetGeneration() {
		t.Errorf("generation %d after a status write, want %d", updated.GetGeneration(), created.GetGeneration())
	}

	table := &metav1.Table{}
	err = c.CoreV1().RESTClient().Get().AbsPath("/apis/gateway.gatehouse.dev/v1/namespaces/default/virtualservices/columns").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Do(ctx).Into(table)
	if err != nil {
		t.Fatal(err)
	}
	cols := map[string]any{}
	for i, col := range table.ColumnDefinitions {
		cols[col.Name] = table.Rows[0].Cells[i]
	}
	if cols["Status"] != "Rejected" || cols["Domains"] == nil {
		t.Errorf("columns %v, want Status Rejected and Domains", cols)
	}

	_, lists, err := c.Discovery().ServerGroupsAndResources()
	if err != nil {
		t.Fatal(err)
	}
	short := map[string][]string{}
	for _, l := range lists {
		for _, r := range l.APIResources {
			if len(r.ShortNames) > 0 {
				short[r.Kind] = r.ShortNames
			}
		}
	}
	for kind, want := range map[string]string{"VirtualService": "vs", "Upstream": "us", "AuthConfig": "ac", "Settings": "ghs"} {
		if got := short[kind]; len(got) != 1 || got[0] != want {
			t.Errorf("%s short names %v, want [%s]", kind, got, want)
		}
	}
}
