package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/spf13/cobra"

	"gatehouse.dev/gatehouse/controlplane/snapshots"
)

// targetFlags say where an operator verb (get, check, proxy served-config) reads the
// control plane's state: its admin server, or the cluster Gatehouse is installed in.
type targetFlags struct {
	admin, kubeconfig, namespace string
}

const targetHelp = "Reads from --admin ADDR (or GATEHOUSE_ADMIN) when given; else from Kubernetes when\n" +
	"--kubeconfig, --namespace or KUBECONFIG is given; else from the default admin address if a\n" +
	"control plane answers there (gatehouse dev); else from the cluster of ~/.kube/config."

// addTargetFlags adds --admin, --kubeconfig and --namespace to cmd (to its subcommands
// too when persistent).
func addTargetFlags(cmd *cobra.Command, persistent bool, f *targetFlags) {
	fs := cmd.Flags()
	if persistent {
		fs = cmd.PersistentFlags()
	}
	fs.StringVar(&f.admin, "admin", cliAdmin(), "the control plane's admin address (env GATEHOUSE_ADMIN)")
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file of the cluster Gatehouse is installed in (default: $KUBECONFIG, ~/.kube/config, or in-cluster)")
	fs.StringVarP(&f.namespace, "namespace", "n", "gatehouse-system", "namespace Gatehouse is installed in (with a kubeconfig)")
}

// target is where the state is read: an admin address, or a cluster.
type target struct {
	admin string
	kube  *kubeTarget
}

// resolve picks the target as targetHelp says; verb prefixes its errors.
func (f *targetFlags) resolve(cmd *cobra.Command, verb string) (*target, error) {
	fs := cmd.Flags()
	if fs.Changed("admin") || os.Getenv("GATEHOUSE_ADMIN") != "" {
		return &target{admin: f.admin}, nil
	}
	if fs.Changed("kubeconfig") || fs.Changed("namespace") || os.Getenv("KUBECONFIG") != "" {
		k, err := newKubeTarget(f.kubeconfig, f.namespace)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", verb, err)
		}
		return &target{kube: k}, nil
	}
	if answers(f.admin) {
		return &target{admin: f.admin}, nil
	}
	if k, err := newKubeTarget("", f.namespace); err == nil {
		return &target{kube: k}, nil
	}
	return nil, fmt.Errorf("%s: no control plane to read: nothing answers on %s and there is no kubeconfig "+
		"(KUBECONFIG, ~/.kube/config or in-cluster): give --admin ADDR (or GATEHOUSE_ADMIN) for a control plane "+
		"you run, or --kubeconfig FILE [--namespace NS] for Gatehouse installed in Kubernetes", verb, f.admin)
}

// fetch reads an admin path (a /snapshots/ view) from the target.
func (t *target) fetch(ctx context.Context, path string, data any) (snapshots.Status, error) {
	if t.kube != nil {
		return t.kube.fetch(ctx, path, data)
	}
	return snapshots.Fetch(ctx, t.admin, path, data)
}

// answers says something accepts connections on addr.
func answers(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}
