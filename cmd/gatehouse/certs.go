package main

import (
	"io"

	"github.com/spf13/cobra"
)

// certsCommand groups the verbs that make the certificates of mutual TLS between the
// components (internal/mtls).
func certsCommand(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "certs", Short: "Certificates for mutual TLS between the control plane, extauth and the gateway proxies"}
	cmd.AddCommand(certsKubeCommand(stdout, stderr))
	return cmd
}
