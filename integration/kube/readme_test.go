// Package kube_test runs the README's "Kubernetes" session against a real API server:
// install with the chart built into the binary, apply a VirtualService with kubectl,
// read its status, uninstall. There are no kubelets, so the control plane the chart's
// Deployment would run is started here as a process, with the same flags.
package kube_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gatehouse.dev/gatehouse/integration/testbin"
	"gatehouse.dev/gatehouse/internal/kubetest"
)

var env *kubetest.Env

func TestMain(m *testing.M) {
	os.Exit(testbin.Wrap(func() int { return kubetest.Main(m, &env) }))
}

// sh runs one documented command with KUBECONFIG pointing at the test's API server.
func sh(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(context.Background(), bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Kubeconfig)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(bin), strings.Join(args, " "), err, out)
	}
	return string(out)
}

func TestReadmeKubernetesSession(t *testing.T) {
	gh := testbin.Gatehouse(t)
	root := testbin.Root(t)
	runCertJobs(t, gh)

	out := sh(t, gh, "install")
	if !strings.Contains(out, "installed gatehouse") || !strings.Contains(out, "in namespace gatehouse-system") {
		t.Fatalf("gatehouse install said:\n%s", out)
	}
	// The install's hook Job made the certificate Secrets every component mounts.
	for _, want := range []string{"gatehouse-ca", "gatehouse-controlplane-tls", "gatehouse-extauth-tls", "gatehouse-proxy-gateway-proxy-tls"} {
		if got := sh(t, env.Kubectl, "get", "secret", "-n", "gatehouse-system", want, "-o", "name"); strings.TrimSpace(got) != "secret/"+want {
			t.Errorf("secret %s: %q", want, got)
		}
	}
	// docs/operating.md shows a second run, which keeps them all.
	until := regexp.MustCompile(`\(until [0-9TZ:-]+\)`)
	for _, st := range testbin.ConsoleSteps(testbin.DocBlock(t, "docs/operating.md", "<!-- kube-certs")) {
		args := strings.Fields(st.Command)
		if args[0] != "gatehouse" {
			t.Fatalf("docs/operating.md shows %q; this test runs gatehouse commands only", st.Command)
		}
		got := until.ReplaceAllString(sh(t, gh, args[1:]...), "(until …)")
		if want := until.ReplaceAllString(st.Output, "(until …)"); got != want {
			t.Errorf("$ %s\n%s\nwant (as in docs/operating.md):\n%s", st.Command, got, want)
		}
	}
	for _, want := range []string{"controlplane", "extauth", "gateway-proxy"} {
		if got := sh(t, env.Kubectl, "get", "deployment", "-n", "gatehouse-system", want, "-o", "name"); strings.TrimSpace(got) != "deployment.apps/"+want {
			t.Errorf("deployment %s: %q", want, got)
		}
	}

	// What the controlplane Deployment runs, in place of its pod, as its ServiceAccount:
	// the chart's RBAC must be enough to watch, discover, elect and write statuses.
	token := strings.TrimSpace(sh(t, env.Kubectl, "create", "token", "controlplane", "-n", "gatehouse-system"))
	saConfig, err := env.KubeconfigFor("controlplane", token)
	if err != nil {
		t.Fatal(err)
	}
	xdsAddr := testbin.FreeAddr(t)
	cp := testbin.Start(t, []string{"POD_NAMESPACE=gatehouse-system"}, gh, "controlplane", "--kube", "--kubeconfig", saConfig,
		"--xds-listen", xdsAddr, "--admin-listen", testbin.FreeAddr(t))
	// The gateway-proxy pod's part (this API server runs no pods): a gateway following the
	// control plane as that proxy, which DATA PLANE counts as it counts a cluster's Envoy.
	testbin.Start(t, nil, gh, "gateway", "--xds", xdsAddr, "--listen", testbin.FreeAddr(t), "--https-listen", "", "--admin-listen", "")

	sh(t, env.Kubectl, "apply", "-f", filepath.Join(root, "examples", "kube", "echo.yaml"))
	kubetest.Eventually(t, "kubectl get vs shows Accepted", func() error {
		if strings.Contains(cp.Output(), "forbidden") {
			t.Fatalf("the control plane's ServiceAccount lacks a permission:\n%s", cp.Output())
		}
		got := sh(t, env.Kubectl, "get", "vs", "-n", "default")
		lines := strings.Split(strings.TrimSpace(got), "\n")
		if len(lines) != 2 || !strings.Contains(lines[0], "STATUS") || !strings.HasPrefix(lines[1], "echo ") || !strings.Contains(lines[1], "Accepted") {
			return &unexpected{got}
		}
		return nil
	})
	// The proxy's acknowledgement reaches the status at the writer's next resync.
	kubetest.Eventually(t, "the status as the README shows it", func() error {
		st := sh(t, env.Kubectl, "get", "vs", "echo", "-n", "default", "-o", "jsonpath={.status.statuses.gatehouse-system}")
		if want := `{"dataPlane":"proxies 1/1","observedGeneration":1,"reportedBy":"gatehouse","state":"Accepted"}`; st != want {
			return fmt.Errorf("status %s, want (as in the README) %s", st, want)
		}
		return nil
	})

	if got := sh(t, gh, "get", "virtualservice", "echo"); got != readmeGetVS {
		t.Errorf("gatehouse get virtualservice echo:\n%s\nwant (as in the README):\n%s", got, readmeGetVS)
	}

	out = sh(t, gh, "uninstall", "--all")
	if !strings.Contains(out, "uninstalled release gatehouse") || !strings.Contains(out, "deleted 4 CRDs") {
		t.Errorf("gatehouse uninstall --all said:\n%s", out)
	}
	kubetest.Eventually(t, "CRDs gone", func() error {
		if got := sh(t, env.Kubectl, "get", "crd", "-o", "name"); strings.Contains(got, "gatehouse.dev") {
			return &unexpected{got}
		}
		return nil
	})
	if got := sh(t, env.Kubectl, "get", "deployment", "-n", "gatehouse-system", "-o", "name"); strings.TrimSpace(got) != "" {
		t.Errorf("deployments left after uninstall: %s", got)
	}
}

type unexpected struct{ out string }

func (u *unexpected) Error() string { return "output:\n" + u.out }

// readmeGetVS is what the README shows `gatehouse get virtualservice echo` print: read
// from the cluster, with the status the control plane wrote.
const readmeGetVS = `+-----------------+--------------+------------------+------+----------+-----------------+----------------------------------+-------------+
| VIRTUAL SERVICE | DISPLAY NAME | DOMAINS          | SSL  | STATUS   | LISTENERPLUGINS | ROUTES                           | DATA PLANE  |
+-----------------+--------------+------------------+------+----------+-----------------+----------------------------------+-------------+
| default.echo    | echo         | echo.example.com | none | Accepted | None            | / -> default.echo:8080 (service) | proxies 1/1 |
+-----------------+--------------+------------------+------+----------+-----------------+----------------------------------+-------------+
`
