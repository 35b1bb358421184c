package main

import (
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/spf13/cobra"

	"gatehouse.dev/gatehouse/loader"
)

// pluginTrialCommand is the hidden child side of a trial load (loader.TrialRunner):
// `gatehouse plugin __trial --symbol NAME [--config-stdin] [--result-fd N] FILE.so`, or
// `gatehouse plugin __trial --request-stdin [--result-fd N]` for a spare started ahead
// of time (loader.TrialSpare) that reads the file, symbol and config from stdin.
func pluginTrialCommand(stdout, _ io.Writer) *cobra.Command {
	var symbol string
	var withConfig, request bool
	var resultFD int
	cmd := &cobra.Command{
		Use:    "__trial FILE.so",
		Hidden: true,
		Args: func(cmd *cobra.Command, args []string) error {
			if request {
				return cobra.NoArgs(cmd, args)
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var config []byte
			if withConfig && !request {
				var err error
				if config, err = io.ReadAll(os.Stdin); err != nil {
					return exit(2, fmt.Errorf("plugin __trial: reading the config: %w", err))
				}
			}
			out := stdout
			if resultFD != 1 {
				f := os.NewFile(uintptr(resultFD), "result")
				if f == nil {
					return exit(2, fmt.Errorf("plugin __trial: bad --result-fd %d", resultFD))
				}
				// Whatever the plugin runs must not hold the result stream open.
				syscall.CloseOnExec(resultFD)
				defer f.Close()
				out = f
			}
			if request {
				return loader.ServeSpareTrial(cmd.Context(), os.Stdin, out)
			}
			return loader.WriteTrial(cmd.Context(), out, args[0], symbol, config, withConfig)
		},
	}
	cmd.Flags().StringVar(&symbol, "symbol", "Plugin", "exported symbol to look up")
	cmd.Flags().BoolVar(&withConfig, "config-stdin", false, "read the step config (JSON) from stdin, decode it and call GetAuthService")
	cmd.Flags().BoolVar(&request, "request-stdin", false, "wait for the file, symbol and config as one JSON request on stdin (a spare started ahead of time)")
	cmd.Flags().IntVar(&resultFD, "result-fd", 1, "file descriptor the JSON result is written to")
	return cmd
}
