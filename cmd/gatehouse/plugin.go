package main

import (
	"io"

	"github.com/spf13/cobra"
)

// pluginCommand is `gatehouse plugin`, the plugin author's toolchain.
func pluginCommand(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugin",
		Short: "Build, verify and package auth plugins for this gatehouse binary",
		Long: "Tools for plugin authors. Every one of them works from this binary's build contract\n" +
			"(`gatehouse plugin contract`): a plugin loads only if it was built with the same Go release,\n" +
			"build settings and shared module versions. See docs/plugins.md.",
	}
	cmd.AddCommand(
		pluginNewCommand(stdout, stderr),
		pluginContractCommand(stdout, stderr),
		pluginVerifyCommand(stdout, stderr),
		pluginTestCommand(stdout, stderr),
		pluginBuildCommand(stdout, stderr),
		pluginImageCommand(stdout, stderr),
		pluginTrialCommand(stdout, stderr),
		pluginWorkerCommand(stdout, stderr),
	)
	return cmd
}
