// Package kubecheck_test runs `gatehouse check --kube` against a real API server
// (internal/kubetest: etcd and kube-apiserver, no kubelet), with Deployment and Pod
// statuses written as the kubelet and the controllers would.
package kubecheck_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"gatehouse.dev/gatehouse/integration/testbin"
	"gatehouse.dev/gatehouse/internal/kubetest"
)

var env *kubetest.Env

func TestMain(m *testing.M) {
	os.Exit(testbin.Wrap(func() int { return kubetest.Main(m, &env) }))
}

// ns is the namespace of this run: a new one each time, as the API server outlives a
// run of -count=N.
var ns string

func deployment(t *testing.T, c kubernetes.Interface, name string, replicas, available int32) {
	t.Helper()
	ctx := context.Background()
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: "gatehouse"}}}}},
	}
	got, err := c.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Status = appsv1.DeploymentStatus{Replicas: replicas, AvailableReplicas: available, ReadyReplicas: available}
	if _, err := c.AppsV1().Deployments(ns).UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func pod(t *testing.T, c kubernetes.Interface, name string, ready bool, waiting string) {
	t.Helper()
	ctx := context.Background()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "gatehouse"}}}}
	got, err := c.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cond := corev1.ConditionFalse
	if ready {
		cond = corev1.ConditionTrue
	}
	cs := corev1.ContainerStatus{Name: "main", Ready: ready, RestartCount: 4, Image: "gatehouse"}
	if waiting != "" {
		cs.State.Waiting = &corev1.ContainerStateWaiting{Reason: waiting}
	} else {
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(time.Now())}
	}
	got.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: cond}},
		ContainerStatuses: []corev1.ContainerStatus{cs}}
	if _, err := c.CoreV1().Pods(ns).UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func gatehouse(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(testbin.Gatehouse(t), args...)
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

// TestCheckKube: with --kube, check lists the Deployments and Pods of the namespace
// and reports those not available or not ready, in the checks' order.
func TestCheckKube(t *testing.T) {
	client, _ := env.Clients(t)
	ns = fmt.Sprintf("gatehouse-%d", time.Now().UnixNano())
	if _, err := client.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	admin, xdsAddr := testbin.FreeAddr(t), testbin.FreeAddr(t)
	cp := testbin.Start(t, nil, testbin.Gatehouse(t), "controlplane", "--resources", dir, "--xds-listen", xdsAddr, "--admin-listen", admin)
	testbin.WaitTCP(t, cp, admin, 20*time.Second)
	// A gateway follows the control plane, as the gateway-proxy Deployment's would.
	testbin.Start(t, nil, testbin.Gatehouse(t), "gateway", "--xds", xdsAddr, "--listen", testbin.FreeAddr(t), "--https-listen", "", "--admin-listen", "")
	args := []string{"check", "--kube", "--kubeconfig", env.Kubeconfig, "-n", ns, "--admin", admin}

	deployment(t, client, "controlplane", 1, 1)
	deployment(t, client, "extauth", 2, 2)
	pod(t, client, "controlplane-1", true, "")
	pod(t, client, "extauth-1", true, "")
	testbin.Eventually(t, 20*time.Second, func() error {
		code, out := gatehouse(t, args...)
		if code != 0 || !strings.Contains(out, "Checking Pods... OK") || !strings.Contains(out, "No problems detected.") {
			return &failure{code, out}
		}
		return nil
	})

	deployment(t, client, "gateway-proxy", 2, 1)
	pod(t, client, "extauth-2", false, "CrashLoopBackOff")
	code, out := gatehouse(t, args...)
	want := strings.ReplaceAll(`Checking Deployments... 1 Errors!
  deployment NS/gateway-proxy: 1 of 2 replicas available
Checking Pods... 1 Errors!
  pod NS/extauth-2: Running, not ready (main: CrashLoopBackOff, 4 restarts)
Checking Sources... OK
Checking Upstreams... OK
`, "NS", ns)
	if code != 1 || !strings.HasPrefix(out, want) || !strings.HasSuffix(out, "2 Errors found!\n") {
		t.Errorf("check --kube on a broken namespace: exit %d\n%s\nwant exit 1 beginning with\n%s", code, out, want)
	}
	if code, out := gatehouse(t, append(args, "-o", "json")...); code != 1 || !strings.Contains(out, `"name": "pods"`) {
		t.Errorf("check --kube -o json: exit %d\n%s", code, out)
	}
}

type failure struct {
	code int
	out  string
}

func (f *failure) Error() string { return fmt.Sprintf("exit %d:\n%s", f.code, f.out) }
