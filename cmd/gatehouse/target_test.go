package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"
)

const testKubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`

// TestTargetResolve: --admin or GATEHOUSE_ADMIN wins; then a kubeconfig asked for
// (--kubeconfig, --namespace, KUBECONFIG); then the default admin address when it
// answers; then ~/.kube/config; else an error naming both ways.
func TestTargetResolve(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kc, []byte(testKubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	answering := lis.Addr().String()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	silent := closed.Addr().String()
	closed.Close()

	type want struct {
		Admin, Namespace, Err string // Namespace set: a cluster target
	}
	for _, tc := range []struct {
		name       string
		args       []string
		env        map[string]string
		defaultTo  string // the default admin address
		homeConfig bool   // ~/.kube/config exists
		want       want
	}{
		{"--admin", []string{"--admin", "127.0.0.1:7"}, nil, silent, true, want{Admin: "127.0.0.1:7"}},
		{"GATEHOUSE_ADMIN", nil, map[string]string{"GATEHOUSE_ADMIN": "x"}, silent, true, want{Admin: silent}},
		{"--kubeconfig", []string{"--kubeconfig", kc}, nil, answering, false, want{Namespace: "gatehouse-system"}},
		{"--kubeconfig missing", []string{"--kubeconfig", filepath.Join(dir, "none")}, nil, answering, false, want{Err: "get: kubeconfig: "}},
		{"KUBECONFIG", nil, map[string]string{"KUBECONFIG": kc}, answering, false, want{Namespace: "gatehouse-system"}},
		{"--namespace", []string{"-n", "edge"}, nil, answering, true, want{Namespace: "edge"}},
		{"default admin answers", nil, nil, answering, true, want{Admin: answering}},
		{"home kubeconfig", nil, nil, silent, true, want{Namespace: "gatehouse-system"}},
		{"nothing", nil, nil, silent, false, want{Err: "get: no control plane to read: nothing answers on " + silent +
			" and there is no kubeconfig (KUBECONFIG, ~/.kube/config or in-cluster): give --admin ADDR (or GATEHOUSE_ADMIN) " +
			"for a control plane you run, or --kubeconfig FILE [--namespace NS] for Gatehouse installed in Kubernetes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"GATEHOUSE_ADMIN", "KUBECONFIG", "KUBERNETES_SERVICE_HOST"} {
				t.Setenv(k, tc.env[k])
			}
			home := filepath.Join(t.TempDir(), "config")
			if tc.homeConfig {
				home = kc
			}
			saved := clientcmd.RecommendedHomeFile
			clientcmd.RecommendedHomeFile = home
			t.Cleanup(func() { clientcmd.RecommendedHomeFile = saved })

			var f targetFlags
			cmd := &cobra.Command{Use: "get", RunE: func(*cobra.Command, []string) error { return nil }}
			addTargetFlags(cmd, false, &f)
			if err := cmd.ParseFlags(tc.args); err != nil {
				t.Fatal(err)
			}
			if !cmd.Flags().Changed("admin") {
				f.admin = tc.defaultTo
			}
			var got want
			tg, err := f.resolve(cmd, "get")
			switch {
			case err != nil:
				got.Err = err.Error()
				if strings.HasPrefix(got.Err, "get: kubeconfig: ") {
					got.Err = "get: kubeconfig: "
				}
			case tg.kube != nil:
				got.Namespace = tg.kube.namespace
			default:
				got.Admin = tg.admin
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("resolve (-want +got):\n%s", diff)
			}
		})
	}
}
