package kube_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"gatehouse.dev/gatehouse/controlplane/kube"
	"gatehouse.dev/gatehouse/integration/testbin"
	"gatehouse.dev/gatehouse/internal/kubetest"
)

var upstreamGVR = schema.GroupVersionResource{Group: "core.gatehouse.dev", Version: "v1", Resource: "upstreams"}

// newNamespace creates a namespace named prefix plus a number of this run (the API
// server outlives a run of -count=N).
func newNamespace(t *testing.T, prefix string) string {
	t.Helper()
	c, _ := env.Clients(t)
	ns := fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()%1e9)
	if _, err := c.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ns
}

// startControlPlane runs `gatehouse controlplane --kube` as the chart's pod would in ns,
// watching ns only.
func startControlPlane(t *testing.T, gh, ns string, args ...string) (*testbin.Process, string) {
	t.Helper()
	xdsAddr := testbin.FreeAddr(t)
	p := testbin.Start(t, []string{"POD_NAMESPACE=" + ns}, gh, append([]string{"controlplane", "--kube", "--kubeconfig", env.Kubeconfig,
		"--watch-namespaces", ns, "--xds-listen", xdsAddr, "--admin-listen", testbin.FreeAddr(t)}, args...)...)
	testbin.WaitTCP(t, p, xdsAddr, time.Minute)
	return p, xdsAddr
}

// identity is the Lease identity of a control-plane process: host name and pid.
func identity(t *testing.T, p *testbin.Process) string {
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return host + "-" + strconv.Itoa(p.Pid())
}

func leaseHolder(t *testing.T, ns string) string {
	t.Helper()
	c, _ := env.Clients(t)
	l, err := c.CoordinationV1().Leases(ns).Get(context.Background(), kube.LeaseName, metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// waitUpstreamStatus waits until the Upstream's status entry of ns is state about generation.
func waitUpstreamStatus(t *testing.T, ns, name, state string, generation int64) *unstructured.Unstructured {
	t.Helper()
	_, dyn := env.Clients(t)
	var u *unstructured.Unstructured
	kubetest.Eventually(t, fmt.Sprintf("Upstream %s/%s %s at generation %d", ns, name, state, generation), func() error {
		var err error
		if u, err = dyn.Resource(upstreamGVR).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{}); err != nil {
			return err
		}
		st, _, _ := unstructured.NestedMap(u.Object, "status", "statuses", ns)
		if st["state"] != state || st["observedGeneration"] != generation {
			return fmt.Errorf("status %v", st)
		}
		return nil
	})
	return u
}

// TestLeaderFailoverOnCrash: two control-plane processes against the API server; the
// one holding the Lease is SIGKILLed, so it never releases it. The other takes the
// Lease over once it expires and writes the statuses of what changed since.
func TestLeaderFailoverOnCrash(t *testing.T) {
	gh := testbin.Gatehouse(t)
	env.InstallCRDs(t)
	ns := newNamespace(t, "gh-failover")
	const lease = 3 * time.Second
	a, _ := startControlPlane(t, gh, ns, "--lease-duration", lease.String())
	kubetest.Eventually(t, "the first replica leads", func() error {
		if h := leaseHolder(t, ns); h != identity(t, a) {
			return fmt.Errorf("lease held by %q", h)
		}
		return nil
	})
	b, _ := startControlPlane(t, gh, ns, "--lease-duration", lease.String())

	apply(t, "apiVersion: core.gatehouse.dev/v1\nkind: Upstream\nmetadata: {name: backend, namespace: APPS}\nspec:\n  static:\n    hosts: [{addr: 127.0.0.1, port: 9}]\n", ns)
	waitUpstreamStatus(t, ns, "backend", "Accepted", 1)
	if h := leaseHolder(t, ns); h != identity(t, a) {
		t.Fatalf("lease held by %q once b started, want a (%s)", h, identity(t, a))
	}

	crash := time.Now()
	a.Kill()
	kubetest.Eventually(t, "the follower takes the Lease over", func() error {
		if h := leaseHolder(t, ns); h != identity(t, b) {
			return fmt.Errorf("lease held by %q", h)
		}
		return nil
	})
	t.Logf("failover after SIGKILL: b holds the Lease %v after the crash (lease duration %v)", time.Since(crash).Round(time.Millisecond), lease)

	apply(t, "apiVersion: core.gatehouse.dev/v1\nkind: Upstream\nmetadata: {name: backend, namespace: APPS}\nspec:\n  static:\n    hosts: [{addr: 127.0.0.1, port: 10}]\n", ns)
	waitUpstreamStatus(t, ns, "backend", "Accepted", 2)
	if b.Exited() {
		t.Fatalf("b exited:\n%s", b.Output())
	}
}
