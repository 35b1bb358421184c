package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"gatehouse.dev/gatehouse/deploy/helm"
)

type clusterOptions struct {
	kubeconfig, namespace string
}

func (o *clusterOptions) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG or ~/.kube/config)")
	cmd.Flags().StringVarP(&o.namespace, "namespace", "n", "gatehouse-system", "namespace of the release")
}

// helmConfig is Helm's action configuration for the cluster of o.
func (o *clusterOptions) helmConfig(stderr io.Writer) (*action.Configuration, *genericclioptions.ConfigFlags, error) {
	flags := genericclioptions.NewConfigFlags(true)
	flags.Namespace = &o.namespace
	if o.kubeconfig != "" {
		flags.KubeConfig = &o.kubeconfig
	}
	cfg := new(action.Configuration)
	logf := func(format string, v ...any) { fmt.Fprintf(stderr, format+"\n", v...) }
	if err := cfg.Init(flags, o.namespace, "secret", func(string, ...any) {}); err != nil {
		return nil, nil, fmt.Errorf("kubernetes: %w", err)
	}
	_ = logf
	return cfg, flags, nil
}

func installCommand(stdout, stderr io.Writer) *cobra.Command {
	var o clusterOptions
	var valuesFile string
	cmd := &cobra.Command{
		Use:   "install [--values F] [--namespace NS]",
		Short: "Install Gatehouse into Kubernetes (the Helm chart built into this binary)",
		Long: "Installs the CRDs, the control plane, extauth and the Envoy gateway proxy as the Helm\n" +
			"release \"gatehouse\" of --namespace (created if needed), with the chart of this release.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			vals := map[string]any{}
			if valuesFile != "" {
				v, err := chartutil.ReadValuesFile(valuesFile)
				if err != nil {
					return exit(2, fmt.Errorf("install: --values: %w", err))
				}
				vals = v
			}
			cfg, _, err := o.helmConfig(stderr)
			if err != nil {
				return err
			}
			rel, err := helm.Install(cmd.Context(), cfg, o.namespace, vals)
			if err != nil {
				return fmt.Errorf("install: %w", err)
			}
			fmt.Fprintf(stdout, "installed gatehouse %s in namespace %s (release %s, revision %d)\n",
				rel.Chart.Metadata.AppVersion, rel.Namespace, rel.Name, rel.Version)
			return nil
		},
	}
	o.addFlags(cmd)
	cmd.Flags().StringVarP(&valuesFile, "values", "f", "", "values YAML file (see the chart's values.yaml)")
	return cmd
}

func uninstallCommand(stdout, stderr io.Writer) *cobra.Command {
	var o clusterOptions
	var all bool
	cmd := &cobra.Command{
		Use:   "uninstall [--all]",
		Short: "Remove the Gatehouse release from Kubernetes (--all: its CRDs and resources too)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, flags, err := o.helmConfig(stderr)
			if err != nil {
				return err
			}
			err = helm.Uninstall(cfg)
			switch {
			case err == nil:
				fmt.Fprintf(stdout, "uninstalled release %s from namespace %s\n", helm.ReleaseName, o.namespace)
			case !all:
				return fmt.Errorf("uninstall: %w", err)
			default:
				fmt.Fprintf(stderr, "uninstall: %v; removing the CRDs anyway\n", err)
			}
			if !all {
				return nil
			}
			// Helm never deletes a chart's CRDs (that deletes every resource of them): --all does.
			rc, err := flags.ToRESTConfig()
			if err != nil {
				return fmt.Errorf("uninstall --all: %w", err)
			}
			n, err := helm.DeleteCRDs(cmd.Context(), rc)
			if err != nil {
				return fmt.Errorf("uninstall --all: %w", err)
			}
			fmt.Fprintf(stdout, "deleted %d CRDs and every resource of them\n", n)
			return nil
		},
	}
	o.addFlags(cmd)
	cmd.Flags().BoolVar(&all, "all", false, "also delete the CRDs, and with them every VirtualService, Upstream, AuthConfig and Settings")
	return cmd
}
