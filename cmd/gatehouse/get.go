package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"gatehouse.dev/gatehouse/controlplane/listing"
	"gatehouse.dev/gatehouse/controlplane/snapshots"
	"gatehouse.dev/gatehouse/internal/table"
)

// getKinds are the `gatehouse get` subcommands: name, aliases, kind and table.
var getKinds = []struct {
	use     string
	aliases []string
	kind    string
	table   func([]listing.Resource) (listing.Table, error)
}{
	{"upstreams", []string{"upstream", "us"}, "Upstream", listing.Upstreams},
	{"virtualservice", []string{"virtualservices", "vs"}, "VirtualService", listing.VirtualServices},
	{"authconfig", []string{"authconfigs", "ac"}, "AuthConfig", listing.AuthConfigs},
}

func getCommand(stdout, _ io.Writer) *cobra.Command {
	var admin, output string
	cmd := &cobra.Command{
		Use:   "get",
		Short: "List upstreams, virtual services or auth configs as the control plane sees them",
	}
	cmd.PersistentFlags().StringVar(&admin, "admin", cliAdmin(), "the control plane's admin address (env GATEHOUSE_ADMIN)")
	cmd.PersistentFlags().StringVarP(&output, "output", "o", "table", "table, yaml or json (secrets redacted)")
	for _, k := range getKinds {
		cmd.AddCommand(&cobra.Command{
			Use:     k.use + " [NAME]",
			Aliases: k.aliases,
			Short:   "List " + k.kind + "s with their status (NAME: one, by name or <namespace>.<name>)",
			Args:    cobra.MaximumNArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				if output != "table" && output != "yaml" && output != "json" {
					return exit(2, fmt.Errorf("get: -o %q: use table, yaml or json", output))
				}
				var edge listing.Edge
				if _, err := snapshots.Fetch(cmd.Context(), admin, "/snapshots/edge", &edge); err != nil {
					return exit(2, fmt.Errorf("get: %w", err))
				}
				name := ""
				if len(args) == 1 {
					name = args[0]
				}
				rs := edge.Select(k.kind, name)
				if name != "" && len(rs) == 0 {
					return exit(1, fmt.Errorf("get: no %s named %q", k.kind, name))
				}
				if output != "table" {
					return writeData(stdout, output, rs)
				}
				t, err := k.table(rs)
				if err != nil {
					return exit(2, fmt.Errorf("get: %w", err))
				}
				return table.Write(stdout, t.Header, t.Rows)
			},
		})
	}
	return cmd
}

// writeData prints v, redacted, as YAML or JSON.
func writeData(w io.Writer, format string, v any) error {
	b, err := snapshots.Redacted(v)
	if err != nil {
		return err
	}
	b = snapshots.Indent(b)
	if format == "yaml" {
		if b, err = yaml.JSONToYAML(b); err != nil {
			return err
		}
	}
	_, err = w.Write(b)
	return err
}
