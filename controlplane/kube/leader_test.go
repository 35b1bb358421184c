package kube_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"gatehouse.dev/gatehouse/controlplane/kube"
	"gatehouse.dev/gatehouse/internal/kubetest"
)

// statusWriters are the field managers that wrote the status subresource of u.
func statusWriters(u *unstructured.Unstructured) map[string]bool {
	out := map[string]bool{}
	for _, mf := range u.GetManagedFields() {
		if mf.Subresource == "status" {
			out[mf.Manager] = true
		}
	}
	return out
}

// TestLeaderElection: two replicas watch the same resources and both serve xDS; only
// the leader writes statuses, and when it goes the other takes the Lease over and
// writes the statuses of what changed since.
func TestLeaderElection(t *testing.T) {
	env.InstallCRDs(t)
	const ns = "ha"
	namespace(t, ns)
	c, dyn := env.Clients(t)
	ctx := context.Background()
	const lease = 3 * time.Second
	a := startPlane(t, ns, "a", lease)
	if !<-a.leading {
		t.Fatal("the only replica did not lead")
	}
	b := startPlane(t, ns, "b", lease)

	if _, err := dyn.Resource(gvr("Upstream")).Namespace(ns).Create(ctx, object(t, fmt.Sprintf(upstreamDoc, ns)), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	u := waitStatus(t, "Upstream", ns, "backend", "Accepted", 1, "")
	if got := statusWriters(u); !got["gatehouse-a"] || got["gatehouse-b"] {
		t.Errorf("status written by %v, want the leader a only", got)
	}
	// Both replicas translated it: the follower serves xDS from its own informers.
	for _, pl := range []*plane{a, b} {
		kubetest.Eventually(t, "upstream in the replica's edge", func() error {
			if e := pl.p.Stages().Edge; e != nil {
				for _, r := range e.Resources.All() {
					if r.Name == "backend" {
						return nil
					}
				}
			}
			return fmt.Errorf("not yet")
		})
	}

	start := time.Now()
	a.close()
	select {
	case l := <-b.leading:
		if !l {
			t.Fatal("b reported losing a lead it never had")
		}
	case <-time.After(time.Minute):
		t.Fatal("b did not take the Lease over within a minute")
	}
	t.Logf("failover: b leads %v after a stopped (lease %v)", time.Since(start).Round(time.Millisecond), lease)
	l, err := c.CoordinationV1().Leases(ns).Get(ctx, kube.LeaseName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != "b" {
		t.Errorf("lease held by %v, want b", l.Spec.HolderIdentity)
	}

	update(t, "Upstream", ns, "backend", func(u *unstructured.Unstructured) error {
		return unstructured.SetNestedSlice(u.Object, []any{map[string]any{"addr": "127.0.0.1", "port": int64(10)}}, "spec", "static", "hosts")
	})
	u = waitStatus(t, "Upstream", ns, "backend", "Accepted", 2, "")
	if got := statusWriters(u); !got["gatehouse-b"] {
		t.Errorf("status written by %v after the failover, want b among them", got)
	}
}
