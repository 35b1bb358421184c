package kube_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"gatehouse.dev/gatehouse/integration/testbin"
	"gatehouse.dev/gatehouse/internal/kubetest"
)

// run runs a command with KUBECONFIG pointing at the test's API server and returns its
// exit status and combined output.
func run(t *testing.T, bin string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Kubeconfig)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, out.String()
}

const cliResources = `apiVersion: core.gatehouse.dev/v1
kind: Upstream
metadata: {name: echo, namespace: APPS}
spec:
  static:
    hosts: [{addr: 127.0.0.1, port: 8090}]
---
apiVersion: gateway.gatehouse.dev/v1
kind: VirtualService
metadata: {name: shop, namespace: APPS}
spec:
  virtualHost:
    domains: [shop.example.com]
    routes:
      - matchers: [{prefix: /}]
        routeAction: {single: {upstream: {name: echo}}}
`

const brokenVS = `apiVersion: gateway.gatehouse.dev/v1
kind: VirtualService
metadata: {name: broken, namespace: APPS}
spec:
  virtualHost:
    domains: [broken.example.com]
    routes:
      - matchers: [{prefix: /}]
        routeAction: {single: {upstream: {name: ech0}}}
`

// apply kubectl-applies doc with APPS replaced by the namespace apps.
func apply(t *testing.T, doc, apps string) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "doc.yaml")
	if err := os.WriteFile(f, []byte(strings.ReplaceAll(doc, "APPS", apps)), 0o600); err != nil {
		t.Fatal(err)
	}
	sh(t, env.Kubectl, "apply", "-f", f)
}

// TestCLIReadsTheCluster: with a kubeconfig and no --admin, `get` lists the custom
// resources with the statuses the control plane wrote (Pending before it did), and
// `proxy served-config` and `check` reach the control plane's admin through the API
// server's pod proxy (the admin port is in no Service), the way they would in a cluster.
// There are no kubelets: the control plane runs here as a process, its Pod is written as
// the kubelet would, and kubetest's pod network carries the API server's request for the
// pod's IP to the process.
func TestCLIReadsTheCluster(t *testing.T) {
	gh := testbin.Gatehouse(t)
	client, _ := env.Clients(t)
	ns := fmt.Sprintf("gh-cli-%d", time.Now().UnixNano()%1e9)
	apps := ns + "-apps"
	runCertJobs(t, gh)
	sh(t, gh, "install", "-n", ns)
	t.Cleanup(func() { sh(t, gh, "uninstall", "-n", ns) })
	if _, err := client.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: apps}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	apply(t, cliResources, apps)
	out := sh(t, gh, "get", "vs", "-n", ns)
	if !rowHas(out, apps+".shop", "shop.example.com", "Pending") {
		t.Errorf("get vs before any control plane ran: want apps.shop Pending\n%s", out)
	}

	admin := testbin.FreeAddr(t)
	testbin.Start(t, []string{"POD_NAMESPACE=" + ns}, gh, "controlplane", "--kube", "--kubeconfig", env.Kubeconfig,
		"--watch-namespaces", apps, "--xds-listen", testbin.FreeAddr(t), "--admin-listen", admin)
	apply(t, brokenVS, apps)
	kubetest.Eventually(t, "get vs shows the statuses the control plane wrote", func() error {
		out = sh(t, gh, "get", "vs", "-n", ns)
		if !rowHas(out, apps+".shop", "Accepted") || !rowHas(out, apps+".broken", "Rejected") {
			return &unexpected{out}
		}
		return nil
	})
	out = sh(t, gh, "get", "vs", "broken", "-n", ns, "-o", "yaml")
	for _, want := range []string{"state: Rejected", "upstream " + apps + ".ech0", "does not exist", "origin: kube VirtualService " + apps + "/broken"} {
		if !strings.Contains(out, want) {
			t.Errorf("get vs broken -o yaml: no %q in\n%s", want, out)
		}
	}
	if out := sh(t, gh, "get", "upstreams", "-n", ns); !rowHas(out, apps+".echo", "Static", "Accepted") {
		t.Errorf("get upstreams: want apps.echo Static Accepted\n%s", out)
	}

	// There is no control-plane pod yet: the CLI says so.
	code, out := run(t, gh, "proxy", "served-config", "-n", ns)
	if code != 2 || !strings.Contains(out, "no ready control-plane pod (gatehouse=controlplane) in namespace "+ns) || !strings.Contains(out, "gatehouse check --kube -n "+ns) {
		t.Errorf("served-config without a control-plane pod: exit %d, want 2 naming the pods and the check\n%s", code, out)
	}

	const podIP = "10.244.0.10"
	controlPlanePod(t, client, ns, podIP)
	env.PodNetwork.Route(podIP+":9091", admin)
	out = sh(t, gh, "proxy", "served-config", "-n", ns)
	if !strings.Contains(out, "shop.example.com") || strings.Contains(out, "broken.example.com") {
		t.Errorf("served-config through the API server: want shop.example.com and not the rejected broken.example.com\n%s", out)
	}

	code, out = run(t, gh, "check", "-n", ns)
	for _, want := range []string{
		"Checking Deployments... 4 Errors!\n  deployment " + ns + "/controlplane: 0 of 1 replicas available\n",
		"Checking Pods... OK\nChecking Sources... OK\n",
		"Checking Upstreams... OK\n",
		"Checking VirtualServices... 1 Errors!\n",
		apps + ".broken",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check -n %s: no %q in (exit %d)\n%s", ns, want, code, out)
		}
	}
	if code != 1 {
		t.Errorf("check -n %s: exit %d, want 1 (errors found)", ns, code)
	}
}

// rowHas says a line of a table has every one of cells.
func rowHas(table string, cells ...string) bool {
	for _, l := range strings.Split(table, "\n") {
		all := true
		for _, c := range cells {
			all = all && strings.Contains(l, "| "+c+" ")
		}
		if all {
			return true
		}
	}
	return false
}

// controlPlanePod writes what a node would for the chart's control-plane pod: a running,
// ready Pod with ip.
func controlPlanePod(t *testing.T, c kubernetes.Interface, ns, ip string) {
	t.Helper()
	ctx := context.Background()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "controlplane-0", Namespace: ns, Labels: map[string]string{"gatehouse": "controlplane"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "controlplane", Image: "gatehouse"}}}}
	got, err := c.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
		Conditions:        []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "controlplane", Ready: true, Image: "gatehouse", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}}}
	if _, err := c.CoreV1().Pods(ns).UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
