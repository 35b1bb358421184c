package main

import (
	"fmt"
	"io"
	"runtime"

	"github.com/spf13/cobra"

	"gatehouse.dev/gatehouse/internal/version"
)

func versionCommand(stdout, _ io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the Gatehouse version and the Go toolchain plugins must be built with",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(stdout, "gatehouse %s (%s %s/%s)\n", version.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}
