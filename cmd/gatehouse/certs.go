package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"gatehouse.dev/gatehouse/internal/mtls"
)

// certsCommand groups the verbs that make the certificates of mutual TLS between the
// components (internal/mtls): files (generate) and Kubernetes Secrets (kube).
func certsCommand(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "certs", Short: "Certificates for mutual TLS between the control plane, extauth and the gateway proxies"}
	o := mtls.GenerateOptions{}
	gen := &cobra.Command{
		Use:   "generate --out DIR --trust-domain D --namespace NS",
		Short: "Write a CA and a certificate folder for the control plane, extauth and each gateway proxy",
		Long: "Writes DIR/ca (the CA; kept when it is there already, so running it again renews the other\n" +
			"certificates) and a folder per component, each holding tls.crt, tls.key and ca.crt (the shape of a\n" +
			"mounted Kubernetes TLS Secret): DIR/controlplane, DIR/extauth and DIR/proxy-<name>. Keys are ECDSA\n" +
			"P-256. Each certificate names its holder as a SPIFFE ID, spiffe://<trust domain>/ns/<namespace>/role/\n" +
			"{controlplane|extauth|proxy/<name>}: that role is what the control plane serves it.\n" +
			"--rotate-ca makes a new CA that every ca.crt trusts beside the previous one until --retire-previous-ca.",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if o.Out == "" {
				return exit(2, fmt.Errorf("certs generate: --out is required"))
			}
			gen, err := mtls.Generate(o)
			if err != nil {
				return exit(2, fmt.Errorf("certs generate: %w", err))
			}
			for _, g := range gen {
				id, _ := g.Identity.ID()
				fmt.Fprintf(stdout, "%-28s %s (until %s)\n", g.Dir, id, g.NotAfter.UTC().Format(time.RFC3339))
			}
			return nil
		},
	}
	gen.Flags().StringVar(&o.Out, "out", "", "output folder")
	gen.Flags().StringVar(&o.TrustDomain, "trust-domain", "cluster.local", "SPIFFE trust domain")
	gen.Flags().StringVar(&o.Namespace, "namespace", "gatehouse-system", "namespace of the control plane and extauth, and of proxies named without one")
	gen.Flags().StringSliceVar(&o.Proxies, "proxy", []string{"gateway-proxy"}, "gateway proxies to make certificates for: <name> (in --namespace) or <namespace>~<name>; repeat or separate by commas")
	gen.Flags().DurationVar(&o.Lifetime, "lifetime", mtls.DefaultCertLifetime, "lifetime of each component's certificate")
	gen.Flags().DurationVar(&o.CALifetime, "ca-lifetime", mtls.DefaultCALifetime, "lifetime of a new CA")
	gen.Flags().BoolVar(&o.RotateCA, "rotate-ca", false, "make a new CA; the previous one stays trusted until --retire-previous-ca")
	gen.Flags().BoolVar(&o.RetirePreviousCA, "retire-previous-ca", false, "stop trusting the CA that --rotate-ca replaced")
	cmd.AddCommand(gen, certsKubeCommand(stdout, stderr))
	return cmd
}
