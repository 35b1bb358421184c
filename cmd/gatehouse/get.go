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
	var (
		where  targetFlags
		output string
	)
	cmd := &cobra.Command{
		Use:   "get",
		Short: "List upstreams, virtual services or auth configs as the control plane sees them",
		Long: "Lists resources with their status: from the control plane's edge snapshot, or, in Kubernetes,\n" +
			"the custom resources of every namespace with the status the control plane of --namespace wrote\n" +
			"(Pending until it reported on their current generation; Upstreams discovered from Services are\n" +
			"listed by the control plane's admin only).\n" + targetHelp,
	}
	addTargetFlags(cmd, true, &where)
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
				edge, err := getEdge(cmd, &where, k.kind)
				if err != nil {
					return exit(2, err)
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

// getEdge reads the resources of kind with their statuses from where resolves to.
func getEdge(cmd *cobra.Command, where *targetFlags, kind string) (*listing.Edge, error) {
	t, err := where.resolve(cmd, "get")
	if err != nil {
		return nil, err
	}
	if t.kube != nil {
		e, err := t.kube.edge(cmd.Context(), kind)
		if err != nil {
			return nil, fmt.Errorf("get: %w", err)
		}
		return e, nil
	}
	var e listing.Edge
	if _, err := t.fetch(cmd.Context(), "/snapshots/edge", &e); err != nil {
		return nil, fmt.Errorf("get: %w", err)
	}
	return &e, nil
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
