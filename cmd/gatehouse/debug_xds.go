package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"gatehouse.dev/gatehouse/controlplane/xds"
	"gatehouse.dev/gatehouse/internal/mtls"
	"gatehouse.dev/gatehouse/server/xdsclient"
)

// debugXDSCommand is `gatehouse debug xds`: what the control plane serves one identity.
func debugXDSCommand(stdout io.Writer) *cobra.Command {
	var addr, tlsDir, role, node string
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "xds --xds ADDR [--xds-tls-dir DIR] [--role ROLE]",
		Short: "Ask the control plane what it serves a role (or a certificate), as a client would, and print the resource names",
		Long: "Opens one delta ADS stream as --role (with --xds-tls-dir and no --role: the role the certificate\n" +
			"names), subscribes to every type of that role, and prints the names of the resources of the first\n" +
			"response of each; never their content, and it acknowledges nothing. A stream the control plane\n" +
			"refuses prints why and exits 1.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o := xdsclient.Options{Addr: addr, NodeID: node, Role: role}
			who := "role " + role
			if tlsDir != "" {
				f, err := mtls.Load(tlsDir, zerolog.Nop())
				if err != nil {
					return exit(2, fmt.Errorf("debug xds: --xds-tls-dir: %w", err))
				}
				o.Credentials = mtls.ClientCredentials(f, mtls.RoleControlplane)
				if role == "" {
					o.Role = f.Self().Identity.Role
				}
				who = fmt.Sprintf("role %s as %s", o.Role, f.Self().ID)
			}
			if o.Role == "" {
				return exit(2, errors.New("debug xds: --role is required without --xds-tls-dir"))
			}
			if o.Role == xds.RoleExtauth {
				o.Types = []string{xds.ExtAuthConfigType}
			} else {
				o.Types = xds.ProxyTypes
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), wait)
			defer cancel()
			got, err := xdsclient.Probe(ctx, o)
			if s, ok := status.FromError(err); ok && err != nil && ctx.Err() == nil {
				if s.Code() == codes.PermissionDenied {
					return exit(1, fmt.Errorf("debug xds: the control plane refused the stream: %s", s.Message()))
				}
				hint := ""
				if tlsDir == "" {
					hint = " (a control plane started with --xds-tls-dir admits only clients that present a certificate: add --xds-tls-dir)"
				}
				return exit(1, fmt.Errorf("debug xds: no stream: %s%s", s.Message(), hint))
			}
			fmt.Fprintln(stdout, who)
			for _, t := range o.Types {
				names, ok := got[t]
				switch {
				case !ok:
					fmt.Fprintf(stdout, "%s: nothing within %s\n", shortTypeName(t), wait)
				case len(names) == 0:
					fmt.Fprintf(stdout, "%s: none\n", shortTypeName(t))
				default:
					fmt.Fprintf(stdout, "%s: %s\n", shortTypeName(t), strings.Join(names, ", "))
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "xds", defaultXDSListen, "the control plane's ADS address")
	cmd.Flags().StringVar(&tlsDir, "xds-tls-dir", "", "certificate folder to present (mutual TLS)")
	cmd.Flags().StringVar(&role, "role", "", "role to claim in the node metadata (default: the certificate's)")
	cmd.Flags().StringVar(&node, "node-id", "gatehouse-debug", "node id")
	cmd.Flags().DurationVar(&wait, "wait", 3*time.Second, "how long to wait for every type's first response")
	return cmd
}

func shortTypeName(typeURL string) string { return typeURL[strings.LastIndex(typeURL, ".")+1:] }
