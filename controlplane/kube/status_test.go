package kube_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"gatehouse.dev/gatehouse/controlplane/kube"
	"gatehouse.dev/gatehouse/controlplane/source"
	"gatehouse.dev/gatehouse/controlplane/validate"
	"gatehouse.dev/gatehouse/internal/kubetest"
)

func gvr(kind string) schema.GroupVersionResource {
	for _, k := range kube.Kinds {
		if k.Kind == kind {
			return k.GVR
		}
	}
	panic(kind)
}

// statusOf reads status.statuses.<ctrl> of an object.
func statusOf(t *testing.T, kind, ns, name, ctrl string) (map[string]any, *unstructured.Unstructured, error) {
	_, dyn := env.Clients(t)
	u, err := dyn.Resource(gvr(kind)).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	st, ok, _ := unstructured.NestedMap(u.Object, "status", "statuses", ctrl)
	if !ok {
		return nil, u, fmt.Errorf("%s %s/%s has no status for %s yet", kind, ns, name, ctrl)
	}
	return st, u, nil
}

func waitStatus(t *testing.T, kind, ns, name, state string, gen int64, reason string) *unstructured.Unstructured {
	t.Helper()
	var obj *unstructured.Unstructured
	kubetest.Eventually(t, fmt.Sprintf("%s %s/%s %s at generation %d", kind, ns, name, state, gen), func() error {
		st, u, err := statusOf(t, kind, ns, name, ns)
		if err != nil {
			return err
		}
		obj = u
		og, _, _ := unstructured.NestedInt64(st, "observedGeneration")
		// No reason wanted: none stored (a Rejected entry's reasons must not linger).
		reasonOK := st["reason"] == nil
		if reason != "" {
			reasonOK = strings.Contains(fmt.Sprint(st["reason"]), reason)
		}
		if st["state"] != state || og != gen || !reasonOK || st["reportedBy"] != "gatehouse" {
			return fmt.Errorf("status %v", st)
		}
		return nil
	})
	return obj
}

const vsDoc = `
apiVersion: gateway.gatehouse.dev/v1
kind: VirtualService
metadata: {name: shop, namespace: %[1]s}
spec:
  virtualHost:
    domains: [%[2]s]
    routes:
    - matchers: [{prefix: /}]
      routeAction: {single: {upstream: {name: backend}}}`

const upstreamDoc = `
apiVersion: core.gatehouse.dev/v1
kind: Upstream
metadata: {name: backend, namespace: %s}
spec: {static: {hosts: [{addr: 127.0.0.1, port: 9}]}}`

// TestStatusWriteBack: the controller writes Rejected with the field path of the
// problem, Accepted once the reference resolves, follows the object's generation, and
// does not write a status that did not change.
func TestStatusWriteBack(t *testing.T) {
	env.InstallCRDs(t)
	const ns = "statuses"
	namespace(t, ns)
	startPlane(t, ns, "only", 3*time.Second)
	_, dyn := env.Clients(t)
	ctx := context.Background()
	vsc := dyn.Resource(gvr("VirtualService")).Namespace(ns)

	if _, err := vsc.Create(ctx, object(t, fmt.Sprintf(vsDoc, ns, "shop.example")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, "VirtualService", ns, "shop", "Rejected", 1, "spec.virtualHost.routes[0].routeAction.single.upstream")

	if _, err := dyn.Resource(gvr("Upstream")).Namespace(ns).Create(ctx, object(t, fmt.Sprintf(upstreamDoc, ns)), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, "Upstream", ns, "backend", "Accepted", 1, "")
	waitStatus(t, "VirtualService", ns, "shop", "Accepted", 1, "")

	update(t, "VirtualService", ns, "shop", func(u *unstructured.Unstructured) error {
		return unstructured.SetNestedStringSlice(u.Object, []string{"shop.example", "www.shop.example"}, "spec", "virtualHost", "domains")
	})
	settled := waitStatus(t, "VirtualService", ns, "shop", "Accepted", 2, "")

	// An unrelated change runs the pipeline again (and the writer resyncs every
	// second): the settled status is not written again.
	other := object(t, fmt.Sprintf(vsDoc, ns, "other.example"))
	other.SetName("other")
	if _, err := vsc.Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, "VirtualService", ns, "other", "Accepted", 1, "")
	time.Sleep(2 * time.Second) // two resyncs; what is checked is that nothing was written
	again, err := vsc.Get(ctx, "shop", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.GetResourceVersion() != settled.GetResourceVersion() {
		t.Errorf("status rewritten without a change: resourceVersion %s, then %s", settled.GetResourceVersion(), again.GetResourceVersion())
	}
}

// TestStatusWriterComparesWhatAnEditChanged: on a new Input the status writer compares
// the resources whose entry in the edge changed (edited or new) with their stored
// status, not every resource (at 10,000 services a pass over all of them on every
// Input); the first pass of a term compares them all.
func TestStatusWriterComparesWhatAnEditChanged(t *testing.T) {
	env.InstallCRDs(t)
	const ns, n = "compared", 300 // more than a chunk of the edge's list
	namespace(t, ns)
	name := func(i int) string { return fmt.Sprintf("up-%03d", i) }
	for i := range n {
		create(t, "Upstream", ns, fmt.Sprintf(upstreamDoc, ns), name(i))
	}
	// No resync during the test: every comparison counted is a new Input's.
	pl := startPlaneResync(t, ns, "only", 3*time.Second, time.Hour)
	for i := range n {
		waitStatus(t, "Upstream", ns, name(i), "Accepted", 1, "")
	}
	if got := kube.StatusesCompared(pl.src); got < n {
		t.Fatalf("%d resources compared before the edit, want every one of the %d at least once", got, n)
	}
	before := kube.StatusesCompared(pl.src)
	update(t, "Upstream", ns, name(n/2), func(u *unstructured.Unstructured) error {
		return unstructured.SetNestedSlice(u.Object, []any{map[string]any{"addr": "127.0.0.1", "port": int64(10)}}, "spec", "static", "hosts")
	})
	waitStatus(t, "Upstream", ns, name(n/2), "Accepted", 2, "")
	if got := kube.StatusesCompared(pl.src) - before; got < 1 || got > 10 {
		t.Errorf("the edit of one Upstream of %d compared %d resources, want it and few others", n, got)
	}
	// A new resource shifts the edge's lists: still only what is new is compared.
	before = kube.StatusesCompared(pl.src)
	create(t, "Upstream", ns, fmt.Sprintf(upstreamDoc, ns), "up-added")
	waitStatus(t, "Upstream", ns, "up-added", "Accepted", 1, "")
	if got := kube.StatusesCompared(pl.src) - before; got < 1 || got > 10 {
		t.Errorf("creating one Upstream beside %d compared %d resources, want it and few others", n, got)
	}
}

// TestInputsShareUnchangedResources: successive Inputs hand validation the same
// resource for a version that did not change (a converted object, a Secret), rather
// than a copy in each Input's list: validation keeps the resource of the Input a
// version arrived in, and a copy kept that Input's whole list alive.
func TestInputsShareUnchangedResources(t *testing.T) {
	env.InstallCRDs(t)
	const ns = "shared"
	namespace(t, ns)
	client, _ := env.Clients(t)
	ctx := context.Background()
	create(t, "Upstream", ns, fmt.Sprintf(upstreamDoc, ns), "backend")
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "tls", Namespace: ns}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{"tls.crt": []byte("not read here"), "tls.key": []byte("not read here")}}
	if _, err := client.CoreV1().Secrets(ns).Create(ctx, sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pl := startPlane(t, ns, "only", 3*time.Second)
	keys := []source.Key{
		{APIVersion: "core.gatehouse.dev/v1", Kind: "Upstream", Namespace: ns, Name: "backend"},
		{APIVersion: "v1", Kind: "Secret", Namespace: ns, Name: "tls"},
	}
	held := func(in *source.Input) []*source.Resource {
		var out []*source.Resource
		for _, k := range keys {
			if r, ok := in.Resources.Get(k); ok {
				out = append(out, r)
			}
		}
		return out
	}
	var first *source.Input
	kubetest.Eventually(t, "an Input with the Upstream and the Secret", func() error {
		first = pl.src.Last()
		if first == nil || len(held(first)) != len(keys) {
			return fmt.Errorf("not yet")
		}
		return nil
	})
	create(t, "Upstream", ns, fmt.Sprintf(upstreamDoc, ns), "other")
	var next *source.Input
	kubetest.Eventually(t, "an Input with the new Upstream", func() error {
		next = pl.src.Last()
		if _, ok := next.Resources.Get(source.Key{APIVersion: "core.gatehouse.dev/v1", Kind: "Upstream", Namespace: ns, Name: "other"}); !ok {
			return fmt.Errorf("not yet")
		}
		return nil
	})
	a, b := held(first), held(next)
	for i, k := range keys {
		if i >= len(b) || a[i] != b[i] {
			t.Errorf("%s: the next Input holds another resource for the same version", k)
		}
	}
}

// TestStatusCarriesTheDataPlane: the entry says how far the resource reached the
// clients; a change of that alone (an acknowledgement, which changes no resource) is
// written at the next resync; `gatehouse get` reads it from the cluster (kube.Listed).
func TestStatusCarriesTheDataPlane(t *testing.T) {
	env.InstallCRDs(t)
	const ns = "dataplane"
	namespace(t, ns)
	var reached atomic.Value
	reached.Store("proxies 0/2")
	startPlaneWith(t, ns, "only", 3*time.Second, time.Second, func(r *validate.Resource) string {
		if r.Kind != "VirtualService" {
			return ""
		}
		return reached.Load().(string)
	})
	create(t, "Upstream", ns, fmt.Sprintf(upstreamDoc, ns), "backend")
	create(t, "VirtualService", ns, fmt.Sprintf(vsDoc, ns, "shop.example"), "shop")
	waitDataPlane := func(want string) *unstructured.Unstructured {
		t.Helper()
		var obj *unstructured.Unstructured
		kubetest.Eventually(t, "dataPlane "+want, func() error {
			st, u, err := statusOf(t, "VirtualService", ns, "shop", ns)
			if err != nil {
				return err
			}
			obj = u
			if st["state"] != "Accepted" || st["dataPlane"] != want {
				return fmt.Errorf("status %v", st)
			}
			return nil
		})
		return obj
	}
	waitDataPlane("proxies 0/2")
	reached.Store("proxies 2/2")
	u := waitDataPlane("proxies 2/2")
	r, err := kube.Listed(u, ns)
	if err != nil {
		t.Fatal(err)
	}
	if r.DataPlane != "proxies 2/2" {
		t.Errorf("listed with dataPlane %q, want %q", r.DataPlane, "proxies 2/2")
	}
	if st, _, _ := statusOf(t, "Upstream", ns, "backend", ns); st["dataPlane"] != nil {
		t.Errorf("an Upstream's entry has dataPlane %v; none was reported", st["dataPlane"])
	}
}
