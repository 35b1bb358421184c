package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"gatehouse.dev/gatehouse/build"
	"gatehouse.dev/gatehouse/loader"
)

// pluginBuildCommand is `gatehouse plugin build`: pin, build, verify.
func pluginBuildCommand(stdout, stderr io.Writer) *cobra.Command {
	var o build.Options
	var symbol string
	var quiet bool
	cmd := &cobra.Command{
		Use:   "build --module DIR --out DIR [--gatehouse-src DIR] [--name NAME]",
		Short: "Build a plugin module so that it loads into this binary, then verify it",
		Long: "Pins the plugin module's go.mod to this binary's version of every module they share\n" +
			"(go mod edit -require, go mod tidy), builds the module's root package with this binary's Go\n" +
			"release and build settings from its list of files (which gives every build its own plugin\n" +
			"path, so a rebuilt plugin loads beside the old one), then runs `gatehouse plugin verify`.\n" +
			"--gatehouse-src DIR adds `replace gatehouse.dev/gatehouse => DIR` to go.mod and builds in a\n" +
			"workspace with DIR; use it while gatehouse.dev/gatehouse is not published, with the checkout\n" +
			"this binary was built from. Prints the path of the plugin.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !quiet {
				o.Log = stderr
			}
			r := &build.Rebuilder{Options: o}
			defer r.Close()
			res, err := r.Build(cmd.Context())
			if err != nil {
				return exit(1, err)
			}
			ch := loader.Checker{}
			d := ch.Check(cmd.Context(), res.Path, res.Path, symbol, nil, false)
			for _, p := range res.Pins {
				fmt.Fprintf(stderr, "pinned %s %s -> %s\n", p.Path, p.From, p.To)
			}
			if !d.OK {
				if err := printDiagnosis(stderr, d, false); err != nil {
					return err
				}
				return exit(1, fmt.Errorf("plugin build: %s was built but does not load", res.Path))
			}
			_, err = fmt.Fprintln(stdout, res.Path)
			return err
		},
	}
	cmd.Flags().StringVar(&o.Module, "module", ".", "plugin module directory (with go.mod); its root package is the plugin")
	cmd.Flags().StringVar(&o.Out, "out", "", "directory to write NAME.so to")
	cmd.Flags().StringVar(&o.Name, "name", "", "file name without .so (default: last element of the module path)")
	cmd.Flags().StringVar(&o.GatehouseSrc, "gatehouse-src", os.Getenv("GATEHOUSE_SRC"), "gatehouse source checkout to build against (adds a replace directive); default $GATEHOUSE_SRC")
	cmd.Flags().StringVar(&symbol, "symbol", "Plugin", "exported symbol to verify")
	cmd.Flags().BoolVar(&quiet, "quiet", false, "do not print the go commands as they run")
	_ = cmd.MarkFlagRequired("out")
	return cmd
}
