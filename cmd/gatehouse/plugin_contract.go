package main

import (
	"encoding/json"
	"io"

	"github.com/spf13/cobra"

	"gatehouse.dev/gatehouse/loader"
)

// pluginContractCommand is `gatehouse plugin contract`.
func pluginContractCommand(stdout, _ io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "contract",
		Short: "Print what a plugin must match to load into this binary, as JSON",
		Long: "Prints this binary's build contract: gatehouse version, Go release, build settings, every\n" +
			"module with version and sum, the C library, and the link-time hash of every package.",
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			c, err := loader.HostContract()
			if err != nil {
				return exit(1, err)
			}
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(c)
		},
	}
}
