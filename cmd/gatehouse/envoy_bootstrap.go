package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"gatehouse.dev/gatehouse/controlplane/bootstrap"
	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/internal/envoysds"
)

// defaultSDSDir is where the SDS files go beside the bootstrap (/etc/envoy/envoy.yaml).
const defaultSDSDir = "/etc/envoy"

func envoyCommand(stdout, _ io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "envoy", Short: "Configuration for stock Envoy"}
	var o bootstrap.Options
	boot := &cobra.Command{
		Use:   "bootstrap --xds ADDR --role NS~NAME",
		Short: "Print /etc/envoy/envoy.yaml for a gateway proxy following the control plane",
		Long: "Prints a complete Envoy bootstrap: delta ADS to the control plane at --xds (LDS and CDS over\n" +
			"ADS; routes, endpoints and secrets follow), the node's metadata role, and the admin on\n" +
			"--admin-address (127.0.0.1:19000: it shows config, keep it on loopback). The ext_authz filter's\n" +
			"cluster (Settings spec.extauth.extauthzServerRef) arrives over CDS with the rest. LDS and CDS\n" +
			"have no initial_fetch_timeout: the listeners stay out until the first configuration arrived.\n" +
			"With --xds-tls-dir, Envoy reaches the control plane over mutual TLS (1.3) and accepts only a\n" +
			"certificate naming the controlplane role; its own certificate and CA come from the SDS files in\n" +
			"--sds-dir, which `gatehouse envoy sds --tls-dir DIR --out SDSDIR` writes, and are re-read when\n" +
			"the certificate folder changes. The output passes the bootstrap proto's validation.",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := (&gatewayOptions{xds: o.XDS, role: o.Role, listen: "-"}).check(); err != nil {
				return exit(2, fmt.Errorf("envoy bootstrap: %w", err))
			}
			if o.TLSDir == "" {
				if c.Flags().Changed("sds-dir") {
					return exit(2, errors.New("envoy bootstrap: --sds-dir needs --xds-tls-dir"))
				}
				o.SDSDir = ""
			}
			b, err := bootstrap.Build(o)
			if err != nil {
				return exit(2, fmt.Errorf("envoy bootstrap: %w", err))
			}
			y, err := bootstrap.YAML(b)
			if err != nil {
				return err
			}
			_, err = stdout.Write(y)
			return err
		},
	}
	boot.Flags().StringVar(&o.XDS, "xds", defaultXDSListen, "the control plane's ADS address as Envoy reaches it (host:port)")
	boot.Flags().StringVar(&o.Role, "role", xds.DefaultProxyRole, "the proxy role, <namespace>~<proxy name>")
	boot.Flags().StringVar(&o.NodeID, "node-id", "gateway-proxy", "the node id")
	boot.Flags().StringVar(&o.Admin, "admin-address", defaultProxyAdmin, "Envoy's admin address")
	boot.Flags().StringVar(&o.TLSDir, "xds-tls-dir", "", "the proxy's certificate folder (tls.crt, tls.key, ca.crt) as Envoy sees it: mutual TLS to the control plane")
	boot.Flags().StringVar(&o.SDSDir, "sds-dir", defaultSDSDir, "the folder of the SDS files as Envoy sees it (with --xds-tls-dir)")
	cmd.AddCommand(boot, envoySDSCommand(stdout))
	return cmd
}

func envoySDSCommand(stdout io.Writer) *cobra.Command {
	var tlsDir, out string
	cmd := &cobra.Command{
		Use:   "sds --tls-dir DIR --out SDSDIR",
		Short: "Write the SDS files naming a certificate folder, for Envoy's mutual TLS",
		Long: "Writes " + envoysds.CertificateFile + " (the certificate and key of --tls-dir) and " + envoysds.ValidationFile + "\n" +
			"(its CA) into --out. They hold file names, never keys: --tls-dir is the folder as Envoy sees it\n" +
			"(absolute), and Envoy re-reads the files when it changes. A bootstrap made with\n" +
			"`gatehouse envoy bootstrap --xds-tls-dir DIR --sds-dir SDSDIR` and Settings\n" +
			"spec.extauth.tls.sdsDir name these files.",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if out == "" {
				return exit(2, errors.New("envoy sds: --out is required"))
			}
			if err := envoysds.Write(tlsDir, out); err != nil {
				return exit(2, fmt.Errorf("envoy sds: %w", err))
			}
			_, err := fmt.Fprintf(stdout, "wrote %s and %s in %s\n", envoysds.CertificateFile, envoysds.ValidationFile, out)
			return err
		},
	}
	cmd.Flags().StringVar(&tlsDir, "tls-dir", "", "the certificate folder (tls.crt, tls.key, ca.crt) as Envoy sees it (absolute)")
	cmd.Flags().StringVar(&out, "out", "", "the folder to write the SDS files into")
	return cmd
}
