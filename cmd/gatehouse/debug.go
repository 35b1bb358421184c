package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"gatehouse.dev/gatehouse/controlplane/snapshots"
	"gatehouse.dev/gatehouse/internal/logging"
)

func debugCommand(stdout, _ io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "debug", Short: "Read Gatehouse logs and dump what the control plane read"}
	var file string
	var errorsOnly bool
	logs := &cobra.Command{
		Use:   "logs [-f FILE] [--errors-only]",
		Short: "Print Gatehouse's JSON logs from FILE (default stdin); --errors-only keeps error lines",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in := cmd.InOrStdin()
			if file != "" && file != "-" {
				f, err := os.Open(file)
				if err != nil {
					return exit(2, fmt.Errorf("debug logs: %w", err))
				}
				defer f.Close()
				in = f
			}
			if err := logging.Filter(stdout, in, errorsOnly); err != nil {
				return exit(2, fmt.Errorf("debug logs: %w", err))
			}
			return nil
		},
	}
	logs.Flags().StringVarP(&file, "file", "f", "", "log file (default: stdin)")
	logs.Flags().BoolVar(&errorsOnly, "errors-only", false, "only lines at level error, fatal or panic")
	var admin, out string
	dump := &cobra.Command{
		Use:   "yaml [-f FILE]",
		Short: "Write every resource the control plane read, secrets redacted, as YAML to FILE (default stdout)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var input any
			if _, err := snapshots.Fetch(cmd.Context(), admin, "/snapshots/input", &input); err != nil {
				return exit(2, fmt.Errorf("debug yaml: %w", err))
			}
			if out == "" || out == "-" {
				return writeData(stdout, "yaml", input)
			}
			tmp := filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+".tmp")
			f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
			if err != nil {
				return exit(2, fmt.Errorf("debug yaml: %w", err))
			}
			err = errors.Join(writeData(f, "yaml", input), f.Close())
			if err == nil {
				err = os.Rename(tmp, out)
			}
			if err != nil {
				os.Remove(tmp)
				return exit(2, fmt.Errorf("debug yaml: %w", err))
			}
			_, err = fmt.Fprintf(stdout, "the control plane's input, secrets redacted, written to %s\n", out)
			return err
		},
	}
	dump.Flags().StringVar(&admin, "admin", cliAdmin(), "the control plane's admin address (env GATEHOUSE_ADMIN)")
	dump.Flags().StringVarP(&out, "file", "f", "", "output file (default: stdout)")
	cmd.AddCommand(logs, dump, debugXDSCommand(stdout))
	return cmd
}
