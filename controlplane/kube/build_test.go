package kube_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"gatehouse.dev/gatehouse/controlplane/kube"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/internal/kubetest"
)

const authConfigDoc = `
apiVersion: enterprise.gateway.gatehouse.dev/v1
kind: AuthConfig
metadata: {name: ac, namespace: %s}
spec: {configs: [{pluginAuth: {name: required_header, exportedSymbolName: Plugin, config: {RequiredHeader: x-a, AllowedValues: [v0]}}}]}`

// inputSummary is what an Input holds: every resource's key, origin and hash, and every
// problem, in order.
func inputSummary(in *source.Input) []string {
	var out []string
	for r := range in.Resources.All() {
		out = append(out, r.Key().String()+" "+r.Origin+" "+r.Hash)
	}
	var problems []string
	for _, p := range in.Problems {
		problems = append(problems, "problem "+p.Origin+": "+p.Message)
	}
	slices.Sort(problems)
	return append(out, problems...)
}

// TestIncrementalInputsMatchAWholeOne: after VirtualServices and AuthConfigs are
// created, edited and deleted, the Input a replica made from its last ones (only those
// kinds changed) is the one a replica started afterwards makes anew; an Upstream's
// change still makes the whole Input.
func TestIncrementalInputsMatchAWholeOne(t *testing.T) {
	env.InstallCRDs(t)
	const ns = "incremental"
	namespace(t, ns)
	_, dyn := env.Clients(t)
	ctx := context.Background()
	create(t, "Upstream", ns, fmt.Sprintf(upstreamDoc, ns), "backend")
	for i := range 5 {
		create(t, "VirtualService", ns, fmt.Sprintf(vsDoc, ns, fmt.Sprintf("vs%d.example", i)), fmt.Sprintf("vs%d", i))
		create(t, "AuthConfig", ns, fmt.Sprintf(authConfigDoc, ns), fmt.Sprintf("ac%d", i))
	}
	a := startPlane(t, ns, "a", 3*time.Second)
	settled := func(pl *plane, what string, cond func(*source.Input) bool) *source.Input {
		t.Helper()
		var in *source.Input
		kubetest.Eventually(t, what, func() error {
			in = pl.src.Last()
			if in == nil || !cond(in) {
				return fmt.Errorf("not yet")
			}
			return nil
		})
		return in
	}
	has := func(kind, name string) func(*source.Input) bool {
		return func(in *source.Input) bool {
			for r := range in.Resources.All() {
				if r.Kind == kind && r.Name == name {
					return true
				}
			}
			return false
		}
	}
	settled(a, "every resource in replica a's Input", has("AuthConfig", "ac4"))
	before := kube.IncrementalInputs(a.src)

	update(t, "VirtualService", ns, "vs1", func(u *unstructured.Unstructured) error {
		return unstructured.SetNestedStringSlice(u.Object, []string{"vs1.example", "www.vs1.example"}, "spec", "virtualHost", "domains")
	})
	update(t, "AuthConfig", ns, "ac2", func(u *unstructured.Unstructured) error {
		u.SetLabels(map[string]string{"team": "edited"})
		return nil
	})
	if err := dyn.Resource(gvr("AuthConfig")).Namespace(ns).Delete(ctx, "ac3", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	create(t, "VirtualService", ns, fmt.Sprintf(vsDoc, ns, "new.example"), "vs-new")
	got := settled(a, "replica a's Input after the edits", func(in *source.Input) bool {
		return has("VirtualService", "vs-new")(in) && !has("AuthConfig", "ac3")(in)
	})
	if kube.IncrementalInputs(a.src) == before {
		t.Error("replica a made no Input from its last one for VirtualService and AuthConfig changes")
	}

	b := startPlane(t, ns, "b", 3*time.Second)
	want := settled(b, "replica b's first Input", has("VirtualService", "vs-new"))
	// a's Input may be older than the last edit's events: wait for it to agree.
	kubetest.Eventually(t, "replica a's Input is the one replica b made anew", func() error {
		got = a.src.Last()
		if !slices.Equal(inputSummary(got), inputSummary(want)) {
			return fmt.Errorf("a: %v\nb: %v", inputSummary(got), inputSummary(want))
		}
		return nil
	})

	// An Upstream edit makes the whole Input again: both replicas still agree.
	upstream := source.Key{APIVersion: "core.gatehouse.dev/v1", Kind: "Upstream", Namespace: ns, Name: "backend"}
	old, _ := want.Resources.Get(upstream)
	update(t, "Upstream", ns, "backend", func(u *unstructured.Unstructured) error {
		return unstructured.SetNestedSlice(u.Object, []any{map[string]any{"addr": "127.0.0.1", "port": int64(10)}}, "spec", "static", "hosts")
	})
	kubetest.Eventually(t, "both replicas' Inputs with the edited Upstream, alike", func() error {
		ia, ib := a.src.Last(), b.src.Last()
		ra, _ := ia.Resources.Get(upstream)
		rb, _ := ib.Resources.Get(upstream)
		if ra == nil || rb == nil || ra.Hash == old.Hash || rb.Hash == old.Hash {
			return fmt.Errorf("not yet")
		}
		if !slices.Equal(inputSummary(ia), inputSummary(ib)) {
			return fmt.Errorf("a: %v\nb: %v", inputSummary(ia), inputSummary(ib))
		}
		return nil
	})
}
