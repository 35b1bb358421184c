// Package kubetest starts a real Kubernetes API server (kube-apiserver and etcd, built
// from the Go module proxy by integration/kube/build-apiserver.sh and cached) on
// loopback for tests. There are no kubelets and no controller manager: objects are
// stored and validated as in a cluster, Deployments never get pods.
//
//	func TestMain(m *testing.M) { os.Exit(kubetest.Main(m, &env)) }
package kubetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// AssetsEnv names the folder holding kube-apiserver and etcd. When it is unset the
// build script is run, which returns at once when its cache is warm.
const AssetsEnv = "GATEHOUSE_KUBE_ASSETS"

// Env is a running API server.
type Env struct {
	// Config reaches the API server as a member of system:masters.
	Config *rest.Config
	// Kubeconfig is a kubeconfig file for Config (for CLIs under test).
	Kubeconfig string
	// Dir is the folder of the server's files (certificates, logs).
	Dir string
	// Kubectl is the kubectl built beside the server (for tests of documented commands).
	Kubectl string
	// PodNetwork carries the API server's requests to pod IPs (its Service and Pod
	// proxies) to loopback addresses the test chooses.
	PodNetwork *PodNetwork

	etcd, apiserver *exec.Cmd
	// exited is closed when the process has ended, by process.
	exited map[*exec.Cmd]chan struct{}
}

// Main starts an API server into *env, runs the tests and stops it. A server that cannot
// start fails the whole package with its log.
func Main(m *testing.M, env **Env) int {
	e, err := Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubetest:", err)
		return 1
	}
	*env = e
	code := m.Run()
	e.Stop()
	return code
}

// Assets returns the folder with kube-apiserver and etcd, building them if needed.
func Assets() (string, error) {
	if d := os.Getenv(AssetsEnv); d != "" {
		return d, nil
	}
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", "integration", "kube", "build-apiserver.sh")
	cmd := exec.Command("bash", script)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("building kube-apiserver and etcd (%s): %w", script, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1], nil
}

// Clients returns a typed and a dynamic client for e.
func (e *Env) Clients(t testing.TB) (kubernetes.Interface, dynamic.Interface) {
	t.Helper()
	c, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	d, err := dynamic.NewForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	return c, d
}

// Stop stops both processes and removes the server's files.
func (e *Env) Stop() {
	for _, c := range []*exec.Cmd{e.apiserver, e.etcd} {
		if c != nil && c.Process != nil {
			_ = c.Process.Signal(os.Interrupt)
			done := e.exited[c]
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = c.Process.Kill()
				<-done
			}
		}
	}
	e.PodNetwork.close()
	_ = os.RemoveAll(e.Dir)
}

// Eventually polls cond every 50ms until it returns nil or the deadline (a generous
// 60s, this is not a timing assertion) passes, then fails with cond's last error.
func Eventually(t testing.TB, what string, cond func() error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := errors.New("not checked")
	for {
		if err = cond(); err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: still not true after 60s: %v", what, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
