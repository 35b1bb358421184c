package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"gatehouse.dev/gatehouse/build/image"
	"gatehouse.dev/gatehouse/internal/version"
	"gatehouse.dev/gatehouse/loader"
)

// pluginImageCommand is `gatehouse plugin image`: it writes a plugin image, tagged with
// this binary's version, as an OCI image layout that any OCI tool can push.
func pluginImageCommand(stdout, _ io.Writer) *cobra.Command {
	var out, copier, repository, symbol string
	timeout := loader.DefaultTrialTimeout
	cmd := &cobra.Command{
		Use:   "image --out LAYOUT_DIR --copier PATH [--repository NAME] FILE.so...",
		Short: "Write a plugin image (compiled plugins plus copier) as an OCI image layout",
		Long: "Write a plugin image as an OCI image layout, without a container engine. Run as an init\n" +
			"container of the extauth deployment, the image copies FILE.so... into /auth-plugins.\n" +
			"The image is tagged and labelled with this gatehouse version, which the server's must equal.\n" +
			"Every plugin is first verified as `gatehouse plugin verify` does; if one would not load, no\n" +
			"image is written and the command exits 1.\n" +
			"Build the copier with: CGO_ENABLED=0 go build -o gatehouse-plugin-copier ./images/copier",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return exit(2, fmt.Errorf("plugin image: no plugin files given; pass one or more .so files"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			// An image of plugins that will not load fails only when the pod starts:
			// check each as the server would, and write nothing if one is refused.
			refused := 0
			ch := loader.Checker{Trial: loader.TrialRunner{Timeout: timeout}}
			for _, file := range args {
				d := ch.Check(cmd.Context(), file, file, symbol, nil, false)
				if d.OK {
					continue
				}
				refused++
				if err := printDiagnosis(stdout, d, false); err != nil {
					return err
				}
			}
			if refused > 0 {
				return exit(1, fmt.Errorf("plugin image: %d of %d plugins would not load into this gatehouse (see above); no image written", refused, len(args)))
			}
			o := image.Options{PluginFiles: args, CopierBinary: copier, Version: version.Version, Repository: repository}
			digest, err := image.Write(out, o)
			if err != nil {
				return exit(1, fmt.Errorf("plugin image: %w", err))
			}
			if repository == "" {
				repository = image.DefaultRepository
			}
			_, err = fmt.Fprintf(stdout, "image  %s:%s\ndigest %s\nlayout %s\n", repository, version.Version, digest, out)
			return err
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "directory to write the OCI image layout to (must not exist or be empty)")
	cmd.Flags().StringVar(&copier, "copier", "", "path to the static copier built from ./images/copier")
	cmd.Flags().StringVar(&repository, "repository", image.DefaultRepository, "image repository recorded in the layout as REPOSITORY:VERSION")
	cmd.Flags().StringVar(&symbol, "symbol", "Plugin", "exported symbol every plugin is verified with (exportedSymbolName)")
	cmd.Flags().DurationVar(&timeout, "timeout", timeout, "how long each plugin's trial load may take")
	_ = cmd.MarkFlagRequired("out")
	_ = cmd.MarkFlagRequired("copier")
	return cmd
}
