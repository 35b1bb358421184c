package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"gatehouse.dev/gatehouse/build/scaffold"
	"gatehouse.dev/gatehouse/loader"
)

// pluginNewCommand is `gatehouse plugin new NAME`: a ready plugin module.
func pluginNewCommand(stdout, _ io.Writer) *cobra.Command {
	o := scaffold.Options{}
	cmd := &cobra.Command{
		Use:   "new NAME [--dir DIR] [--gatehouse-src DIR] [--module-path PATH]",
		Short: "Write a new plugin module, ready to test, build and package for this binary",
		Long: "Writes a plugin module: go.mod pinned to this binary's Go release and gatehouse version\n" +
			"(with `replace gatehouse.dev/gatehouse => DIR` given --gatehouse-src or $GATEHOUSE_SRC), main.go\n" +
			"exporting Plugin with a typed Config, a table-driven main_test.go (pluginapi/plugintest), the\n" +
			"step (step.yaml) and request cases (cases.yaml), a Makefile (test, build, verify, cases, image)\n" +
			"and a Dockerfile for the plugin image. DIR defaults to ./NAME; an existing non-empty DIR is refused.",
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			o.Name = args[0]
			if err := scaffold.CheckName(o.Name); err != nil {
				return exit(2, fmt.Errorf("plugin new: %w", err))
			}
			c, err := loader.HostContract()
			if err != nil {
				return exit(1, fmt.Errorf("plugin new: %w", err))
			}
			o.Contract = c
			dir, written, err := scaffold.Write(o)
			if err != nil {
				return exit(1, fmt.Errorf("plugin new: %w", err))
			}
			for _, f := range written {
				fmt.Fprintln(stdout, filepath.Join(dir, f))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&o.Dir, "dir", "", "directory to write the module to (default ./NAME); must not exist or be empty")
	cmd.Flags().StringVar(&o.ModulePath, "module-path", "", "module path (default example.com/NAME)")
	cmd.Flags().StringVar(&o.GatehouseSrc, "gatehouse-src", os.Getenv("GATEHOUSE_SRC"), "gatehouse source checkout this binary was built from (go.mod replaces gatehouse.dev/gatehouse with it); default $GATEHOUSE_SRC")
	return cmd
}
