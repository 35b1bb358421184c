package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"gatehouse.dev/gatehouse/internal/version"
)

// versionBody is GET /version on the control plane's admin.
type versionBody struct {
	Version string `json:"version"`
}

func versionCommand(stdout, stderr io.Writer) *cobra.Command {
	var admin string
	var strict bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the client's and the control plane's version and the Go toolchain plugins must be built with",
		Long: "Prints this binary's version, then the version of the control plane at --admin. The CLI must\n" +
			"match the control plane it talks to: a difference is a warning, and exit status 1 with --strict.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if _, err := fmt.Fprintf(stdout, "gatehouse %s (%s %s/%s)\n", version.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "client: %s\n", version.Version)
			server, err := serverVersion(cmd.Context(), admin)
			if err != nil {
				fmt.Fprintf(stdout, "server: unknown (%v)\n", err)
				if strict {
					return exit(1, fmt.Errorf("version: --strict: the control plane's version is unknown"))
				}
				return nil
			}
			fmt.Fprintf(stdout, "server: %s (control plane at %s)\n", server, admin)
			if server != version.Version {
				fmt.Fprintf(stderr, "warning: the client (%s) and the control plane (%s) differ; use the gatehouse CLI of the installed version\n", version.Version, server)
				if strict {
					return exit(1, nil)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&admin, "admin", cliAdmin(), "the control plane's admin address (env GATEHOUSE_ADMIN)")
	cmd.Flags().BoolVar(&strict, "strict", false, "exit 1 when the versions differ or the server's is unknown")
	return cmd
}

func serverVersion(ctx context.Context, admin string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+admin+"/version", nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("control plane admin %s unreachable", admin)
	}
	defer resp.Body.Close()
	var v versionBody
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET /version: %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || v.Version == "" {
		return "", fmt.Errorf("GET /version: not a version (%v)", err)
	}
	return v.Version, nil
}
