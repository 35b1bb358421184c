package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"gatehouse.dev/gatehouse/build/image"
	"gatehouse.dev/gatehouse/internal/version"
)

// pluginImageCommand is `gatehouse plugin image`: it writes a plugin image, tagged with
// this binary's version, as an OCI image layout that any OCI tool can push.
func pluginImageCommand(stdout, _ io.Writer) *cobra.Command {
	var out, copier, repository string
	cmd := &cobra.Command{
		Use:   "image --out LAYOUT_DIR --copier PATH [--repository NAME] FILE.so...",
		Short: "Write a plugin image (compiled plugins plus copier) as an OCI image layout",
		Long: "Write a plugin image as an OCI image layout, without a container engine. Run as an init\n" +
			"container of the extauth deployment, the image copies FILE.so... into /auth-plugins.\n" +
			"The image is tagged and labelled with this gatehouse version, which the server's must equal.\n" +
			"Build the copier with: CGO_ENABLED=0 go build -o gatehouse-plugin-copier ./images/copier",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return exit(2, fmt.Errorf("plugin image: no plugin files given; pass one or more .so files"))
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
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
	_ = cmd.MarkFlagRequired("out")
	_ = cmd.MarkFlagRequired("copier")
	return cmd
}
