package main

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// exitError carries a specific exit code out of a cobra RunE.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// exit returns an error that makes run return code; err may be nil for a silent exit.
func exit(code int, err error) error { return &exitError{code: code, err: err} }

// commands lists the subcommand constructors; each lives in its own file.
var commands = []func(stdout, stderr io.Writer) *cobra.Command{
	versionCommand,
	extauthCommand,
	devCommand,
	controlplaneCommand,
	gatewayCommand,
	pluginCommand,
	checkCommand,
	getCommand,
	createCommand,
	proxyCommand,
	envoyCommand,
	debugCommand,
	certsCommand,
	installCommand,
	uninstallCommand,
}

// run executes the CLI with args and returns the process exit code.
func run(args []string) (int, error) { return runWith(args, os.Stdout, os.Stderr) }

func runWith(args []string, stdout, stderr io.Writer) (int, error) {
	root := &cobra.Command{
		Use:           "gatehouse",
		Short:         "External authorization for Envoy with Go plugin step chains",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	for _, c := range commands {
		root.AddCommand(c(stdout, stderr))
	}
	root.SetArgs(args)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := root.ExecuteContext(ctx)
	var ee *exitError
	switch {
	case errors.As(err, &ee):
		return ee.code, ee.err
	case err != nil:
		return 1, err
	}
	return 0, nil
}
