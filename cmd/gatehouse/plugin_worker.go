package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"syscall"

	"github.com/spf13/cobra"

	"gatehouse.dev/gatehouse/loader"
)

// pluginWorkerCommand is the hidden child side of an isolated step (loader.Worker):
// `gatehouse plugin __worker --symbol NAME --conn-fd N [--memory-limit BYTES] FILE.so`,
// with the step's config (JSON) on stdin.
func pluginWorkerCommand(_, _ io.Writer) *cobra.Command {
	var symbol string
	var connFD int
	var memoryLimit int64
	cmd := &cobra.Command{
		Use:    "__worker FILE.so",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			config, err := io.ReadAll(os.Stdin)
			if err != nil {
				return exit(2, fmt.Errorf("plugin __worker: reading the config: %w", err))
			}
			conn := os.NewFile(uintptr(connFD), "conn")
			if conn == nil {
				return exit(2, fmt.Errorf("plugin __worker: bad --conn-fd %d", connFD))
			}
			// Whatever the plugin runs must not hold the connection open.
			syscall.CloseOnExec(connFD)
			if memoryLimit > 0 {
				// The parent kills the worker past the limit; collecting harder as it
				// nears the limit keeps a plugin that only churns below it.
				debug.SetMemoryLimit(memoryLimit * 9 / 10)
			}
			if err := loader.ServeWorker(cmd.Context(), conn, args[0], symbol, config); err != nil {
				return exit(1, err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&symbol, "symbol", "Plugin", "exported symbol to look up")
	cmd.Flags().IntVar(&connFD, "conn-fd", 3, "file descriptor of the unix socket to the server")
	cmd.Flags().Int64Var(&memoryLimit, "memory-limit", 0, "the resident memory the server allows (bytes; 0: none)")
	return cmd
}
