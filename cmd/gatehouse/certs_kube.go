package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"gatehouse.dev/gatehouse/internal/mtls"
	"gatehouse.dev/gatehouse/internal/mtls/certsecrets"
)

func certsKubeCommand(stdout, _ io.Writer) *cobra.Command {
	var kubeconfig string
	o := certsecrets.Options{Now: time.Now}
	cmd := &cobra.Command{
		Use:   "kube [--namespace NS] [--proxy NAME]...",
		Short: "Create or renew the certificate Secrets of an installation in Kubernetes",
		Long: "Keeps, in --namespace, a CA Secret <prefix>-ca (Opaque: ca.crt, ca.key) and a kubernetes.io/tls\n" +
			"Secret <prefix>-<component>-tls (tls.crt, tls.key, ca.crt) for the control plane, extauth and\n" +
			"every --proxy, issued from that CA. A certificate is renewed once two-thirds of its lifetime has\n" +
			"passed, or when it names another identity or was not issued by the current CA; the CA likewise,\n" +
			"and the CA it replaces stays trusted until it expires. A run with nothing to renew writes nothing.\n" +
			"The chart runs it as a Helm hook and a daily CronJob.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := kubeConfig(kubeconfig)
			if err != nil {
				return exit(2, fmt.Errorf("certs kube: %w", err))
			}
			client, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return exit(2, fmt.Errorf("certs kube: %w", err))
			}
			res, err := certsecrets.Sync(cmd.Context(), client, o)
			for _, r := range res {
				line := fmt.Sprintf("%s %s/%s (until %s)", r.Action, o.Namespace, r.Secret, r.NotAfter.UTC().Format(time.RFC3339))
				if r.Why != "" {
					line += ": " + r.Why
				}
				fmt.Fprintln(stdout, line)
			}
			if err != nil {
				return exit(1, err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or the in-cluster service account)")
	f.StringVarP(&o.Namespace, "namespace", "n", controllerNamespace(), "namespace of the installation and its Secrets (default: $POD_NAMESPACE when set)")
	f.StringVar(&o.Prefix, "prefix", "gatehouse", "prefix of the Secrets' names")
	f.StringVar(&o.TrustDomain, "trust-domain", "cluster.local", "SPIFFE trust domain of the certificates")
	f.StringSliceVar(&o.Proxies, "proxy", nil, "gateway proxy name in --namespace, or <namespace>~<name> (repeatable)")
	f.DurationVar(&o.Lifetime, "lifetime", mtls.DefaultCertLifetime, "lifetime of the components' certificates")
	f.DurationVar(&o.CALifetime, "ca-lifetime", mtls.DefaultCALifetime, "lifetime of the CA")
	f.StringToStringVar(&o.Labels, "label", nil, "label put on every Secret written, key=value (repeatable)")
	cmd.PreRunE = func(*cobra.Command, []string) error {
		if o.Namespace == "" {
			return exit(2, errors.New("certs kube: --namespace is required"))
		}
		return nil
	}
	return cmd
}
