package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"gatehouse.dev/gatehouse/controlplane/check"
	"gatehouse.dev/gatehouse/controlplane/snapshots"
)

func checkCommand(stdout, _ io.Writer) *cobra.Command {
	var (
		where          targetFlags
		output         string
		exclude        []string
		readOnly, kube bool
	)
	cmd := &cobra.Command{
		Use:   "check [-o text|json] [-x check,...]",
		Short: "Check the health of the control plane's resources, proxies and xDS clients (exit 1 on errors)",
		Long: "Reads one health snapshot from the control plane's admin server (--admin) and checks, in order:\n" +
			"deployments (with --kube, every Deployment of --namespace has its replicas available; the control\n" +
			"plane read every file; an extauth server and every gateway proxy follow it), pods (with --kube:\n" +
			"running and ready, or why not), upstreams, auth configs, secrets, virtual services (each Accepted), proxies (published) and\n" +
			"xds (every client ACKed the latest version, none rejected anything). Exit status: 0 healthy,\n" +
			"1 errors found (in json mode too), 2 the check could not run. check never changes anything;\n" +
			"--read-only is accepted so scripts written for clusters keep working. In Kubernetes the health\n" +
			"snapshot comes through the API server's proxy to the Service controlplane of --namespace, and\n" +
			"the deployments and pods checks run as with --kube.\n" + targetHelp,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if output != "text" && output != "json" {
				return exit(2, fmt.Errorf("check: -o %q: use text or json", output))
			}
			if err := check.Validate(exclude); err != nil {
				return exit(2, err)
			}
			t, err := where.resolve(cmd, "check")
			if err != nil {
				return exit(2, err)
			}
			kube = kube || t.kube != nil
			h := &check.Health{}
			st, err := t.fetch(cmd.Context(), "/snapshots/health", &h.Data)
			h.Status = st
			switch {
			case errors.Is(err, snapshots.ErrNoSnapshot):
				h = nil
			case err != nil:
				return exit(2, fmt.Errorf("check: %w", err))
			}
			if kube && h != nil {
				w, err := kubeWorkloads(cmd.Context(), where.kubeconfig, where.namespace)
				if err != nil {
					return exit(2, fmt.Errorf("check: %w", err))
				}
				h.Workloads = w
			}
			r := check.Run(h, err, check.Options{Exclude: exclude, Kubernetes: kube})
			write := r.WriteText
			if output == "json" {
				write = r.WriteJSON
			}
			if err := write(stdout); err != nil {
				return exit(2, err)
			}
			if !r.Healthy {
				return exit(1, nil)
			}
			return nil
		},
	}
	addTargetFlags(cmd, false, &where)
	cmd.Flags().StringVarP(&output, "output", "o", "text", "text or json")
	cmd.Flags().StringSliceVarP(&exclude, "exclude", "x", nil, "checks to skip, comma separated")
	cmd.Flags().BoolVar(&readOnly, "read-only", false, "change nothing (check never does)")
	cmd.Flags().BoolVar(&kube, "kube", false, "also check the Deployments and Pods of --namespace in Kubernetes (with --admin)")
	return cmd
}
